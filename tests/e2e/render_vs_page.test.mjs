// `fleetsim render` draws the page's picture: frames 0 and 60 of the example log (a bitmap
// block and a wall, e-pucks and foot-bots with their ring LEDs and beacons, objects), painted by
// `fleetsim render --png` at the size of the page's canvas, against the page's own canvas
// showing the same frames (WebGL2 in headless chromium). Both PNGs are decoded by the browser
// and compared pixel by pixel: at most 0.3 % of the pixels may differ by more than 24 in a
// channel (shape edges where the page's f32 positions and the renderer's f64 ones round to
// different pixels), and the robots' own pixels must be there in both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLEETSIM, ARTIFACTS, startView, openBrowser, load, show, log, pixel, toCanvas, near } from './lib.mjs';

const TOLERANCE = 24; // per channel, 0..255
const MAX_DIFFERENT = 0.003; // fraction of the pixels (measured: 0.14 %)
let server, browser, page;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-render-'));

before(async () => {
  server = await startView([log('example.flog')]);
  browser = await openBrowser({ width: 900, height: 700 });
  page = browser.page;
  await load(page, server.url);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Compares two PNG data URLs in the page: counts of pixels, different ones, and red ones. */
function compare(a, b) {
  return page.evaluate(async ([ua, ub, tol]) => {
    const pixels = async (url) => {
      const img = new Image();
      img.src = url;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      return { w: img.width, h: img.height, d: g.getImageData(0, 0, img.width, img.height).data };
    };
    const [p, q] = [await pixels(ua), await pixels(ub)];
    if (p.w !== q.w || p.h !== q.h) return { size: [p.w, p.h, q.w, q.h] };
    let different = 0, redA = 0, redB = 0;
    for (let i = 0; i < p.d.length; i += 4) {
      const diff = Math.max(Math.abs(p.d[i] - q.d[i]), Math.abs(p.d[i + 1] - q.d[i + 1]),
        Math.abs(p.d[i + 2] - q.d[i + 2]));
      if (diff > tol) different++;
      if (p.d[i] > 200 && p.d[i + 1] < 60 && p.d[i + 2] < 60) redA++;
      if (q.d[i] > 200 && q.d[i + 1] < 60 && q.d[i + 2] < 60) redB++;
    }
    return { pixels: p.w * p.h, different, redA, redB };
  }, [a, b, TOLERANCE]);
}

test('a rendered frame is the page\'s picture of it, within the stated tolerance', async () => {
  const [w, h] = await page.evaluate(() => {
    const r = document.getElementById('scene').getBoundingClientRect();
    return [r.width, r.height];
  });
  assert.ok(Number.isInteger(w) && Number.isInteger(h), `canvas ${w} x ${h}`);
  const r = spawnSync(FLEETSIM, ['render', log('example.flog'), '--png',
    path.join(dir, 'frame_%03d.png'), '--every', '60', '--size', `${w}x${h}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // The page fitted the arena while its layout settled (a canvas a few pixels taller):
  // fitted again to the canvas as it is, as a double-click does.
  await page.dblclick('#scene', { position: { x: 3, y: 3 } });
  for (const frame of [0, 60]) {
    await show(page, frame);
    const pageUrl = await page.evaluate(() => window.fleetsimViewer.canvasPng());
    const file = path.join(dir, `frame_${String(frame).padStart(3, '0')}.png`);
    const rendered = fs.readFileSync(file);
    fs.copyFileSync(file, path.join(ARTIFACTS, `render-frame${frame}.png`));
    fs.writeFileSync(path.join(ARTIFACTS, `page-frame${frame}.png`),
      Buffer.from(pageUrl.split(',')[1], 'base64'));
    const c = await compare(pageUrl, `data:image/png;base64,${rendered.toString('base64')}`);
    assert.ok(!c.size, `sizes differ: ${JSON.stringify(c)}`);
    console.log(`frame ${frame}: ${c.different} of ${c.pixels} pixels differ by more than ` +
      `${TOLERANCE}; red pixels: page ${c.redA}, render ${c.redB}`);
    assert.ok(c.redA > 100 && c.redB > 100, `robots are drawn in both: ${JSON.stringify(c)}`);
    assert.ok(c.different <= MAX_DIFFERENT * c.pixels,
      `frame ${frame}: ${c.different} pixels differ (at most ${MAX_DIFFERENT * c.pixels})`);
  }
});

// Box-shaped robots (boxes.flog: 0.6 m x 0.2 m, turned 30 and -60 degrees) are boxes turned by
// their heading, on the page and in the rendered picture alike; within the box's bounding
// circle but beside it is the floor.
test('boxes are drawn as boxes turned by their heading, on the page and rendered', async () => {
  const boxes = await startView([log('boxes.flog')]);
  try {
    await load(page, boxes.url);
    await page.dblclick('#scene', { position: { x: 3, y: 3 } });
    await show(page, 0);
    const inBox = (cx, cy, a, u, v) => [cx + u * Math.cos(a) - v * Math.sin(a), cy + u * Math.sin(a) + v * Math.cos(a)];
    const RED = [255, 0, 0], FLOOR = [255, 255, 255];
    for (const [cx, cy, a] of [[-0.4, 0.3, Math.PI / 6], [0.4, -0.3, -Math.PI / 3]]) {
      for (const [u, v, want, what] of [[-0.2, 0, RED, 'along it, behind the centre'],
        [-0.2, 0.05, RED, 'off its axis'], [0, 0.2, FLOOR, 'beside its long side'],
        [0.05, -0.2, FLOOR, 'beside its other side']]) {
        const got = await pixel(page, await toCanvas(page, ...inBox(cx, cy, a, u, v)));
        assert.ok(near(got, want), `box at (${cx}, ${cy}), ${what}: ${got}`);
      }
    }
    const [w, h] = await page.evaluate(() => {
      const r = document.getElementById('scene').getBoundingClientRect();
      return [r.width, r.height];
    });
    const file = path.join(dir, 'boxes_0.png');
    const r = spawnSync(FLEETSIM, ['render', log('boxes.flog'), '--png', path.join(dir, 'boxes_%d.png'), '--size', `${w}x${h}`],
      { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    fs.copyFileSync(file, path.join(ARTIFACTS, 'render-boxes.png'));
    const pageUrl = await page.evaluate(() => window.fleetsimViewer.canvasPng());
    fs.writeFileSync(path.join(ARTIFACTS, 'page-boxes.png'), Buffer.from(pageUrl.split(',')[1], 'base64'));
    const c = await compare(pageUrl, `data:image/png;base64,${fs.readFileSync(file).toString('base64')}`);
    console.log(`boxes: ${c.different} of ${c.pixels} pixels differ; red: page ${c.redA}, render ${c.redB}`);
    assert.ok(c.redA > 100 && c.redB > 100, JSON.stringify(c));
    assert.ok(c.different <= MAX_DIFFERENT * c.pixels, `${c.different} pixels differ`);
  } finally {
    await boxes.stop();
  }
});
