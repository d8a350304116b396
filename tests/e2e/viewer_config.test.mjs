// View configurations: colouring by tag, transparent layers, a bad file refused with
// FILE:LINE and status 2.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  startView, runView, openBrowser, load, pixel, toCanvas, show, near, insideRobot, screenshot,
  expected, log,
} from './lib.mjs';

const BLUE = [0, 0, 255];
const GREEN = [0, 153, 0];
const WHITE = [255, 255, 255];
const GREEN_LINE = [0, 204, 0];
const exp = expected();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-view-config-'));
const write = (name, text) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
let browser, page;

before(async () => {
  browser = await openBrowser();
  page = browser.page;
});
after(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('robots coloured by tag: leaders blue, the others the default green', async () => {
  const config = write('by-tag.xml', `<view speed="5" status_color="0,0,0.5">
  <map transparent="true"/>
  <robots by="tag" label="id">
    <default color="0,0.6,0"/>
    <coloring value="leader" color="blue"/>
  </robots>
  <objects shape="circle" color="orange"/>
</view>
`);
  const server = await startView([log('example.flog'), '--config', config]);
  try {
    await load(page, server.url);
    await show(page, 0);
    const robots = exp.frame0.robots;
    const leader = await toCanvas(page, ...insideRobot(robots[0]));
    assert.ok(near(await pixel(page, leader), BLUE), `leader: ${await pixel(page, leader)}`);
    const follower = await toCanvas(page, ...insideRobot(robots[1]));
    assert.ok(near(await pixel(page, follower), GREEN), `follower: ${await pixel(page, follower)}`);
    // Robot 5 becomes a leader at frame 60: its colour follows its tag.
    await show(page, 60);
    const r5 = await toCanvas(page, ...insideRobot(exp.frame60.robots[5]));
    assert.ok(near(await pixel(page, r5), BLUE), `robot 5 at frame 60: ${await pixel(page, r5)}`);
    // The map layer is transparent: the obstacle block shows the floor.
    const block = await toCanvas(page, -1 + 3.55, 1 - 0.45);
    assert.ok(near(await pixel(page, block), WHITE), `hidden map: ${await pixel(page, block)}`);
    assert.equal(await page.evaluate(() => window.fleetsimViewer.state().speed), 5);
    await screenshot(page, 'config-by-tag.png');
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('robots coloured by LED: a foot-bot body takes its first lit ring LED', async () => {
  const config = write('by-led.xml', `<view>
  <robots by="led" leds="false"><default color="0,0.6,0"/></robots>
</view>
`);
  const server = await startView([log('example.flog'), '--config', config]);
  try {
    await load(page, server.url);
    await show(page, 0);
    const r0 = exp.frame0.robots[0]; // a foot-bot whose ring LED 0 is magenta
    assert.equal(r0.kind, 'footbot');
    const body = await toCanvas(page, ...insideRobot(r0));
    assert.ok(near(await pixel(page, body), [255, 0, 255]), `foot-bot: ${await pixel(page, body)}`);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('layer order: objects listed after robots are drawn over them', async () => {
  // A huge object colour over everything would hide robots; instead check the implicit order:
  // a config listing only <robots> gets map and objects appended after it.
  const config = write('order.xml', '<view>\n  <robots color="blue"/>\n</view>\n');
  const server = await startView([log('example.flog'), '--config', config]);
  try {
    await load(page, server.url);
    const types = await page.evaluate(() => window.fleetsimViewer.config.layers.map((l) => l.type));
    assert.deepEqual(types, ['robots', 'map', 'objects']);
    await show(page, 0);
    const at = await toCanvas(page, ...insideRobot(exp.frame0.robots[0]));
    assert.ok(near(await pixel(page, at), BLUE));
  } finally {
    await server.stop();
  }
});

test('range and bearing: a line between two foot-bots in range, none to an e-puck', async () => {
  const config = write('rab.xml', `<view>
  <map transparent="true"/>
  <objects transparent="true"/>
  <robots transparent="true"/>
  <range_and_bearing color="0,0.8,0"/>
</view>
`);
  const server = await startView([log('example.flog'), '--config', config]);
  try {
    await load(page, server.url);
    await show(page, 0);
    const robots = exp.frame0.robots;
    const range = exp.footbotRabRange;
    const dist = (a, b) => Math.hypot(a.x - b.x, a.y - b.y);
    const links = [];
    for (let i = 0; i < robots.length; i++) {
      for (let j = i + 1; j < robots.length; j++) {
        const a = robots[i], b = robots[j];
        if (a.kind === 'footbot' && b.kind === 'footbot' && dist(a, b) <= range) links.push([a, b]);
      }
    }
    assert.ok(links.length > 0, 'the example has foot-bots in range of each other');
    // Any pixel around (x, y) (a 1.5-pixel line need not cover one given pixel).
    const around = async (x, y, colour) => {
      const [cx, cy] = await toCanvas(page, x, y);
      for (const [dx, dy] of [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]]) {
        if (near(await pixel(page, [cx + dx, cy + dy]), colour, 40)) return true;
      }
      return false;
    };
    const [a, b] = links[0];
    assert.ok(await around((a.x + b.x) / 2, (a.y + b.y) / 2, GREEN_LINE), 'the link is drawn');
    // The nearest e-puck to a foot-bot, within the foot-bot's range: no line to it (its kind
    // has no range and bearing). Checked where no foot-bot link passes.
    const onALink = ([x, y]) => links.some(([p, q]) => {
      const vx = q.x - p.x, vy = q.y - p.y;
      const t = Math.max(0, Math.min(1, ((x - p.x) * vx + (y - p.y) * vy) / (vx * vx + vy * vy)));
      return Math.hypot(p.x + t * vx - x, p.y + t * vy - y) < 0.03;
    });
    let checked = 0;
    for (const f of robots.filter((r) => r.kind === 'footbot')) {
      for (const e of robots.filter((r) => r.kind === 'epuck' && dist(r, f) <= range)) {
        const mid = [(f.x + e.x) / 2, (f.y + e.y) / 2];
        if (onALink(mid)) continue;
        assert.ok(!(await around(...mid, GREEN_LINE)), `no line from a foot-bot to an e-puck at ${mid}`);
        checked++;
      }
    }
    assert.ok(checked > 0, 'an e-puck within a foot-bot\'s range was checked');
    await screenshot(page, 'config-rab.png');
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('a bad view configuration gives FILE:LINE: error and status 2', async () => {
  const bad = write('bad.xml', `<view zoom="2">
  <robots by="tag">
    <coloring value="leader" colour="blue"/>
  </robots>
  <map color="1,0"/>
</view>
`);
  const r = await runView([log('example.flog'), '--config', bad]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, new RegExp(`${bad}:3: error: unknown attribute 'colour' .*did you mean 'color'\\?`));
  assert.match(r.err, new RegExp(`${bad}:5: error: attribute 'color' of <map> is '1,0'`));
  assert.doesNotMatch(r.out, /http:/, 'no server for a bad configuration');

  const missing = await runView([log('example.flog'), '--config', path.join(dir, 'nope.xml')]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /nope\.xml: error: file not found/);
});
