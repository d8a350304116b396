// Replaying the example log: robots drawn in their colour where the log puts them, the
// status string, the DEECo keys, mouse zoom / pan / click, the DEECo text log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startView, openBrowser, load, state, pixel, toCanvas, show, near, insideRobot, screenshot,
  expected, log,
} from './lib.mjs';

const RED = [255, 0, 0];
const YELLOW = [255, 255, 0];
const MAGENTA = [255, 0, 255];
const CYAN = [0, 255, 255];
const WHITE = [255, 255, 255];
const BLACK = [0, 0, 0];
const exp = expected();
let server, browser, page;

before(async () => {
  server = await startView([log('example.flog')]);
  browser = await openBrowser();
  page = browser.page;
  await load(page, server.url);
});

after(async () => {
  await browser?.close();
  if (server) {
    const code = await server.stop();
    assert.equal(code, 0, `fleetsim view should stop cleanly on Ctrl+C:\n${server.err}`);
    assert.match(server.out, /stopped/);
  }
});

test('the server prints the URL and what it serves', () => {
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  assert.match(server.out, /120 frames, 24 robots/);
});

test('robot 0 is drawn in red where the log puts it, and moves with the frames', async () => {
  await show(page, 0);
  const r0 = exp.frame0.robots[0];
  const got = await page.evaluate(() => window.fleetsimViewer.robot(0));
  assert.ok(Math.abs(got.x - r0.x) < 1e-5 && Math.abs(got.y - r0.y) < 1e-5, JSON.stringify(got));
  const at0 = await toCanvas(page, ...insideRobot(r0));
  assert.ok(near(await pixel(page, at0), RED), `robot 0 at ${at0}: ${await pixel(page, at0)}`);
  await screenshot(page, 'replay-frame0.png');

  await show(page, 60);
  const r60 = exp.frame60.robots[0];
  const at60 = await toCanvas(page, ...insideRobot(r60));
  assert.ok(near(await pixel(page, at60), RED), `robot 0 at frame 60: ${await pixel(page, at60)}`);
  // Where it was at frame 0 is now empty floor.
  assert.ok(near(await pixel(page, at0), WHITE), `old place: ${await pixel(page, at0)}`);
  await screenshot(page, 'replay-frame60.png');
});

test('a foot-bot shows its ring LEDs around the body and its beacon at the centre', async () => {
  await show(page, 0);
  const r0 = exp.frame0.robots[0]; // a foot-bot: 12 ring LEDs (magenta, cyan, ...) + beacon
  assert.equal(r0.kind, 'footbot');
  const beacon = await toCanvas(page, r0.x, r0.y);
  assert.ok(near(await pixel(page, beacon), YELLOW), `beacon: ${await pixel(page, beacon)}`);
  // Ring LED j at 0.75 radius, at the heading + j x 30 degrees.
  const ring = (j) => {
    const a = r0.theta + (2 * Math.PI * j) / 12;
    return [r0.x + 0.75 * r0.radius * Math.cos(a), r0.y + 0.75 * r0.radius * Math.sin(a)];
  };
  const led0 = await toCanvas(page, ...ring(0));
  assert.ok(near(await pixel(page, led0), MAGENTA), `ring LED 0: ${await pixel(page, led0)}`);
  const led3 = await toCanvas(page, ...ring(3));
  assert.ok(near(await pixel(page, led3), CYAN), `ring LED 3: ${await pixel(page, led3)}`);
  // An e-puck has one LED: no dots, its body keeps the layer's colour.
  const epuck = exp.frame0.robots[2];
  assert.equal(epuck.kind, 'epuck');
  const body = await toCanvas(page, epuck.x, epuck.y - 0.3 * epuck.radius);
  assert.ok(near(await pixel(page, body), RED), `e-puck: ${await pixel(page, body)}`);
});

test('a column the page has never heard of arrives decoded', async () => {
  await show(page, 10);
  for (const i of [0, 3, 23]) {
    const got = await page.evaluate((k) => window.fleetsimViewer.robot(k), i);
    assert.deepEqual(got.columns.test_value, exp.frame10.robots[i].testValue, `robot ${i}`);
    assert.equal(got.kind, exp.frame10.robots[i].kind);
  }
});

test('the obstacle map is drawn in black', async () => {
  // Bitmap block: columns 33..37, rows 3..6 of a 0.1 m bitmap whose top-left is (-1, 1).
  const at = await toCanvas(page, -1 + 3.55, 1 - 0.45);
  assert.ok(near(await pixel(page, at), BLACK), `obstacle: ${await pixel(page, at)}`);
  const wall = await toCanvas(page, -0.3, -1.8);
  assert.ok(near(await pixel(page, wall), BLACK), `wall segment: ${await pixel(page, wall)}`);
});

test('status string, tick and simulated time follow the frame', async () => {
  await show(page, 10);
  assert.equal(await page.textContent('#status'), exp.frame10.status);
  const clock = await page.textContent('#clock');
  assert.match(clock, /tick 10 /);
  assert.match(clock, /t = 1\.000 s/);
});

test('keys: space, arrows, up/down and Enter as in the DEECo playground', async () => {
  await show(page, 0);
  await page.focus('#scene');
  let s = await state(page);
  assert.equal(s.playing, false);

  await page.keyboard.press(' ');
  await page.waitForTimeout(600);
  s = await state(page);
  assert.equal(s.playing, true, 'space resumes');
  assert.ok(s.tick > 0, `playing advances the tick (tick ${s.tick})`);

  await page.keyboard.press(' ');
  await page.waitForTimeout(100); // the frame shown catches up with the player
  s = await state(page);
  assert.equal(s.playing, false, 'space pauses');
  const paused = s.tick;
  await page.waitForTimeout(300);
  assert.equal((await state(page)).tick, paused, 'paused: the tick stays');

  await page.keyboard.press('ArrowRight');
  await page.waitForTimeout(100);
  assert.equal((await state(page)).tick, paused + 1, '→ steps forward');
  await page.keyboard.press('ArrowLeft');
  await page.waitForTimeout(100);
  assert.equal((await state(page)).tick, paused, '← steps back');

  // Held → fast-forwards at the seek speed (10 x 10 ticks/s by default).
  await page.keyboard.down('ArrowRight');
  await page.waitForTimeout(150);
  assert.equal((await state(page)).mode, 'fast-forward');
  await page.waitForTimeout(450);
  await page.keyboard.up('ArrowRight');
  await page.waitForTimeout(50);
  s = await state(page);
  assert.ok(s.tick >= paused + 15, `holding → fast-forwards (from ${paused} to ${s.tick})`);
  assert.equal(s.mode, 'paused');

  const speed = s.speed;
  await page.keyboard.press('ArrowUp');
  assert.equal((await state(page)).speed, speed * 2, '↑ faster');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal((await state(page)).speed, speed / 2, '↓ slower');

  await page.keyboard.press('Enter');
  s = await state(page);
  assert.equal(s.playing, true, 'Enter restarts playing');
  assert.ok(s.frame <= 2, `Enter restarts from the beginning (frame ${s.frame})`);
  await screenshot(page, 'replay-keys.png');
});

test('clicking a robot shows its id, tag and pose', async () => {
  await show(page, 0);
  const r0 = exp.frame0.robots[0];
  const [x, y] = await toCanvas(page, r0.x, r0.y);
  const box = await page.locator('#scene').boundingBox();
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction(() => window.fleetsimViewer.state().selected?.name === 'r0');
  // The page shows its own values at once, then the log's exact ones with every other column.
  await page.waitForFunction(() => window.fleetsimViewer.state().selected?.columns !== undefined);
  const info = await page.textContent('#info');
  assert.match(info, /r0 \(id 0\)/);
  assert.match(info, /kind +footbot/);
  assert.match(info, /test_value \[0,0\.25,0\.5\]/); // the log's own column, exact
  assert.match(info, /leader/);
  assert.match(info, new RegExp(`x +${r0.x.toFixed(4)} m`));
  assert.match(info, /θ +0\.3000 rad/);
  await screenshot(page, 'replay-click.png');
});

test('the clicked robot: f follows it with the camera, t draws its trail', async () => {
  // (r0 is selected by the test before.)
  await show(page, 0);
  await page.keyboard.press('f');
  await page.keyboard.press('t');
  await show(page, 30);
  const s = await state(page);
  assert.equal(s.following, true);
  const robot = await page.evaluate(() => {
    const v = window.fleetsimViewer;
    for (let i = 0; ; i++) { const r = v.robot(i); if (!r || r.id === 0) return r; }
  });
  const box = await page.locator('#scene').boundingBox();
  const [cx, cy] = await toCanvas(page, robot.x, robot.y);
  assert.ok(Math.abs(cx - box.width / 2) < 1.5 && Math.abs(cy - box.height / 2) < 1.5,
    `the robot at the centre of the window (${cx}, ${cy} in ${box.width} x ${box.height})`);
  // Its trail: its positions in the frames held over the last 10 s, each a point of the line.
  assert.ok(s.trail && s.trail.points >= 2, `a trail of ${JSON.stringify(s.trail)}`);
  const earlier = await page.evaluate(async () => {
    const v = window.fleetsimViewer;
    await v.show(25);
    for (let i = 0; ; i++) { const r = v.robot(i); if (!r || r.id === 0) return r; }
  });
  await show(page, 30);
  const moved = Math.hypot(robot.x - earlier.x, robot.y - earlier.y);
  if (moved > 0.5) { // (far enough from the body to see the line there)
    const at = await toCanvas(page, earlier.x, earlier.y);
    const px = await pixel(page, at);
    assert.ok(px[0] < 100 && px[1] < 100 && px[2] < 100, `the trail's dark line at frame 25's position: ${px}`);
  }
  await screenshot(page, 'replay-follow-trail.png');
  await page.keyboard.press('f');
  await page.keyboard.press('t');
  assert.equal((await state(page)).following, false);
  await page.dblclick('#scene', { position: { x: 5, y: 5 } }); // (the arena fitted again)
});

test('wheel zooms around the cursor, drag pans, double-click fits', async () => {
  const box = await page.locator('#scene').boundingBox();
  const before = await toCanvas(page, 2, 0);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -500);
  await page.waitForTimeout(100);
  const zoomed = await toCanvas(page, 2, 0);
  assert.ok(Math.abs(zoomed[0] - box.width / 2) > Math.abs(before[0] - box.width / 2) * 1.5,
    `zoomed in: ${before} -> ${zoomed}`);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 100, box.y + box.height / 2 + 40, { steps: 5 });
  await page.mouse.up();
  const panned = await toCanvas(page, 2, 0);
  assert.ok(Math.abs(panned[0] - zoomed[0] - 100) < 2 && Math.abs(panned[1] - zoomed[1] - 40) < 2,
    `panned by (100, 40): ${zoomed} -> ${panned}`);
  await screenshot(page, 'replay-zoomed.png');
  await page.dblclick('#scene', { position: { x: 5, y: 5 } });
  const fitted = await toCanvas(page, 2, 0);
  assert.ok(Math.abs(fitted[0] - before[0]) < 1 && Math.abs(fitted[1] - before[1]) < 1);
});

test('the DEECo text log replays the same swarm', async () => {
  const deeco = await startView([log('example.deeco.log')]);
  try {
    await load(page, deeco.url);
    await show(page, 60);
    // A DEECo log counts in field units (bitmap pixels, here 0.1 m) from the field's centre:
    // the example's bitmap is 40 x 30 pixels with its top-left corner at (-1, 1).
    const r = exp.frame60.robots[0];
    const r60 = { x: (r.x + 1) / 0.1 - 20, y: 15 - (1 - r.y) / 0.1, theta: r.theta, radius: r.radius / 0.1 };
    const got = await page.evaluate(() => window.fleetsimViewer.robot(0));
    assert.ok(Math.abs(got.x - r60.x) < 1e-3 && Math.abs(got.y - r60.y) < 1e-3, JSON.stringify(got));
    const at = await toCanvas(page, ...insideRobot(r60));
    assert.ok(near(await pixel(page, at), RED), `DEECo robot 0: ${await pixel(page, at)}`);
    assert.equal(await page.textContent('#status'), exp.frame60.status);
    await screenshot(page, 'replay-deeco.png');
  } finally {
    assert.equal(await deeco.stop(), 0);
  }
});
