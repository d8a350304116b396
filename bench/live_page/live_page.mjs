// bench/live_page: the live view's page at a large swarm (issue 30: at 100,000 robots the page
// keeps >= 30 fps while the run goes at >= 1x real time). Runs `fleetsim run --view` on the
// diffusion example grown to --robots e-pucks (40 m x 40 m rooms, 10 ticks a second, no log),
// paced at --speed x real time, opens the printed URL in Debian's Chromium (headless,
// software WebGL: SwiftShader, the e2e tests' flags) and, while the page follows the run,
// makes it draw at every animation frame (as it does while the user pans or zooms) for
// --seconds. Prints one JSON line:
//   fps               animation frames the page drew per second (each one a full redraw)
//   new_frames_per_s  distinct run frames the page showed per second
//   run_frames_per_s  ticks the run computed per wall second (it holds every tick's frame
//                     while paced)
//   realtime_factor   simulated seconds per wall second over the same window
//   frame_ms_median / frame_ms_p90: time between animation frames
//   decode_ms_median  parsing one received chunk (off the main thread when a worker decodes)
//   load_average      the machine's, at the start and the end
//
//   node bench/live_page/live_page.mjs [--robots 100000] [--speed 1] [--seconds 15]
//        [--threads 1] [--width 1280] [--height 720] [--query '?renderer=canvas2d']
//        [--run-args '--view-paused'] [--profile 15] [--pan 1]
// --pan 1: the view also moves a few pixels at every animation frame (as while the user drags
// it), so that everything is drawn anew each time.
// FLEETSIM names the binary (default: build/fleetsim below the current folder: run it from the
// source tree).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBrowser, load, startLiveRun } from '../../tests/e2e/lib.mjs';

const SOURCE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const args = Object.fromEntries(process.argv.slice(2).reduce((out, a, i, all) => {
  if (a.startsWith('--')) out.push([a.slice(2), all[i + 1]]);
  return out;
}, []));
const robots = Number(args.robots || 100000);
const speed = args.speed || '1';
const seconds = Number(args.seconds || 15);
const threads = Number(args.threads || 1);
const width = Number(args.width || 1280), height = Number(args.height || 720);

// The diffusion example, grown, without a log, long enough for the measurement.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-live-page-'));
fs.copyFileSync(path.join(SOURCE, 'examples/diffusion/rooms.png'), path.join(dir, 'rooms.png'));
const xml = fs.readFileSync(path.join(SOURCE, 'examples/diffusion/diffusion.xml'), 'utf8')
  .replace(/count="\d+"/, `count="${robots}"`)
  .replace(/length="\d+"/, 'length="100000"')
  .replace(/threads="\d+"/, `threads="${threads}"`)
  .replace(/<log [^>]*\/>/, '');
const experiment = path.join(dir, 'live.xml');
fs.writeFileSync(experiment, xml);

const status = async (url) => {
  const u = new URL(url);
  const res = await fetch(`${u.origin}/api/live${u.search}`);
  return res.json();
};

const load0 = os.loadavg()[0];
const run = await startLiveRun(experiment, ['--quiet', '--view-speed', speed,
  ...(args['run-args'] ? args['run-args'].split(' ') : [])], dir);
const browser = await openBrowser({ width, height });
let code = 0;
try {
  await load(browser.page, run.url + (args.query ? args.query.replace(/^\?/, '&') : ''));
  const header = await browser.page.evaluate(() => window.fleetsimViewer.header);
  const s0 = await status(run.url), t0 = Date.now();
  let cdp = null;
  if (args.profile) { // --profile N: the page's N functions of most self time, on stderr
    cdp = await browser.page.context().newCDPSession(browser.page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
  }
  let tracing = null;
  if (args.trace) { // --trace FILE: a Chromium trace of the measurement (chrome://tracing)
    tracing = await browser.page.context().newCDPSession(browser.page);
    tracing.events = [];
    tracing.on('Tracing.dataCollected', (e) => tracing.events.push(...e.value));
    tracing.done = new Promise((res) => tracing.on('Tracing.tracingComplete', res));
    await tracing.send('Tracing.start', { transferMode: 'ReportEvents',
      categories: 'devtools.timeline,disabled-by-default-devtools.timeline,gpu,cc,viz,blink,toplevel,v8' });
  }
  const r = await browser.page.evaluate(([s, pan]) => window.fleetsimViewer.benchmark(s, { pan }),
    [seconds, !!args.pan]);
  if (tracing) {
    await tracing.send('Tracing.end');
    await tracing.done;
    fs.writeFileSync(args.trace, JSON.stringify({ traceEvents: tracing.events }));
  }
  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    const self = new Map();
    const dt = new Map();
    profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) || 0) + (profile.timeDeltas[i] || 0)));
    let total = 0;
    for (const n of profile.nodes) {
      const f = n.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
      const us = dt.get(n.id) || 0;
      total += us;
      self.set(key, (self.get(key) || 0) + us);
    }
    const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(args.profile));
    for (const [k, us] of top) console.error(`${(100 * us / total).toFixed(1).padStart(5)} %  ${k}`);
  }
  const s1 = await status(run.url), t1 = Date.now();
  const wall = (t1 - t0) / 1000;
  const ticks = s1.tick - s0.tick;
  console.log(JSON.stringify({
    bench: 'live_page', robots: r.robots, viewport: `${width}x${height}`, speed, pan: !!args.pan,
    threads, renderer: r.renderer, mode: r.mode, device: r.device,
    seconds: +r.seconds.toFixed(2), fps: +r.fps.toFixed(1),
    new_frames_per_s: +r.newFramesPerSecond.toFixed(1),
    frame_ms_median: +r.frameMsMedian.toFixed(1), frame_ms_p90: +r.frameMsP90.toFixed(1),
    decode_ms_median: r.decodeMsMedian === null ? null : +r.decodeMsMedian.toFixed(1),
    decoder: r.decoder,
    run_frames_per_s: +(ticks / wall).toFixed(2),
    realtime_factor: +(ticks * header.tickPeriodNs / 1e9 / wall).toFixed(3),
    load_average: [+load0.toFixed(2), +os.loadavg()[0].toFixed(2)],
  }));
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await browser.close();
  run.proc.kill('SIGINT');
  await new Promise((res) => run.proc.on('exit', res));
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
