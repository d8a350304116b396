// Replay benchmark: 100,000 robots (bench.flog from make_test_log --bench) in headless
// Chromium; the page draws a new frame at every animation frame and reports frames per second.
// Prints one JSON line. Run: ctest --test-dir build -R e2e_viewer_bench -V
//   (or: node tests/e2e/bench_replay.mjs with FLEETSIM, E2E_LOGS set)
import { startView, openBrowser, load, screenshot, log } from './lib.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 10);
const width = Number(process.env.BENCH_WIDTH || 1280), height = Number(process.env.BENCH_HEIGHT || 720);
const renderer = process.env.BENCH_RENDERER || '';
const server = await startView([log('bench.flog')]);
const browser = await openBrowser({ width, height });
let code = 0;
try {
  const t0 = Date.now();
  await load(browser.page, server.url + (process.env.BENCH_QUERY || (renderer ? `?renderer=${renderer}` : '')));
  await browser.page.evaluate(() => window.fleetsimViewer.preload());
  const loadSeconds = (Date.now() - t0) / 1000;
  const r = await browser.page.evaluate((s) => window.fleetsimViewer.benchmark(s), seconds);
  await screenshot(browser.page, 'bench-100k.png');
  console.log(JSON.stringify({
    bench: 'viewer_replay', robots: r.robots, viewport: `${width}x${height}`,
    renderer: r.renderer, mode: r.mode, device: r.device, seconds: +r.seconds.toFixed(2),
    fps: +r.fps.toFixed(1), new_frames_per_s: +r.newFramesPerSecond.toFixed(1),
    load_s: +loadSeconds.toFixed(2),
  }));
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await browser.close();
  await server.stop();
}
process.exit(code);
