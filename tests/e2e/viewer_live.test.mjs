// The live view (`fleetsim run --view`): a page attaches to a running run, pauses, steps and
// resumes it; two pages watch at once; a page without the run's token watches but cannot
// control; the reset button takes the run back to tick 0; a robot dragged on the page moves, and
// one clicked gets new LEDs (c) and is removed (Delete), one gets a held command from its panel;
// the interventions file replays the session with the same log bytes; the page says when the
// run has ended.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLEETSIM, openBrowser, load, state, screenshot, toCanvas, startLiveRun } from './lib.mjs';

const SOURCE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const EXPERIMENT = path.join(SOURCE, 'examples/diffusion/diffusion.xml');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-live-'));
const RECORD = path.join(dir, 'session.interventions');

/** Runs `fleetsim run EXPERIMENT ARGS --json` to its end; resolves to { code, out, err }. */
function runToEnd(args) {
  return new Promise((resolve) => {
    const p = spawn(FLEETSIM, ['run', EXPERIMENT, '--quiet', '--json', ...args], { cwd: SOURCE });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** Starts a paused run with --view; resolves once it prints its URL. */
const startPausedRun = (logPath) => startLiveRun(EXPERIMENT, ['--view-paused', '--log', logPath,
  '--record-interventions', RECORD], SOURCE);

const live = (page) => page.evaluate(() => window.fleetsimViewer.state().live);
/** Waits until the page's view of the run satisfies `pred(live, state)`. */
async function until(page, pred, what, timeout = 15000) {
  const t0 = Date.now();
  for (;;) {
    const s = await state(page);
    if (s.live && pred(s.live, s)) return s;
    if (Date.now() - t0 > timeout) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s)}`);
    await page.waitForTimeout(50);
  }
}

/** Waits for the paused run, then shows its newest frame; resolves to the page's state. */
async function pausedAtNewest(page) {
  const s = await until(page, (l) => l.state === 'paused', 'the paused run');
  await page.click('#run-follow');
  await until(page, (l, st) => st.frame === st.frameCount - 1, 'the newest frame shown');
  return s;
}

let run, reference, browser, second;
before(async () => {
  reference = await runToEnd(['--log', path.join(dir, 'plain.flog')]);
  assert.equal(reference.code, 0, reference.err);
  run = await startPausedRun(path.join(dir, 'live.flog'));
  browser = await openBrowser();
  second = await openBrowser();
});
after(async () => {
  await browser?.close();
  await second?.close();
  if (run && run.code === undefined) run.proc.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a page attaches to the running run and pauses, steps and resumes it', async () => {
  const page = browser.page;
  await load(page, run.url);
  let s = await until(page, (l) => l.state === 'paused', 'the paused run');
  assert.equal(s.live.control, true, 'the URL with the token controls the run');
  assert.equal(await page.isDisabled('#run-step'), false);
  const t0 = s.live.tick;
  await page.click('#run-step');
  s = await until(page, (l, st) => l.tick === t0 + 1 && st.tick === t0 + 1, 'one tick after step');
  await page.click('#run-step');
  s = await until(page, (l, st) => l.tick === t0 + 2 && st.tick === t0 + 2, 'a second tick');
  assert.equal(s.live.state, 'paused', 'a step leaves the run paused');
  assert.match(await page.textContent('#run-state'), /paused · tick 2/);

  // Real time, then resume: the run goes on; pause: it stays where it is.
  await page.selectOption('#run-speed', '1');
  await until(page, (l) => l.speed === 1, 'real time');
  await page.click('#run-pause');
  s = await until(page, (l, st) => l.state === 'running' && st.tick >= t0 + 5, 'the run going on');
  await page.click('#run-pause');
  s = await until(page, (l) => l.state === 'paused', 'paused again');
  const held = s.live.tick;
  await page.waitForTimeout(500);
  s = await state(page);
  assert.equal(s.live.tick, held, 'a paused run computes nothing');
  await screenshot(page, 'live-paused.png');
});

test('two pages watch at once; the one without the token cannot control', async () => {
  const watcher = second.page;
  const plain = run.url.replace(/\?token=.*/, '');
  await load(watcher, plain);
  let w = await until(watcher, (l) => l.state === 'paused', 'the second page');
  assert.equal(w.live.control, false);
  assert.equal(await watcher.isDisabled('#run-pause'), true, 'no control without the token');
  assert.equal(await watcher.isDisabled('#run-step'), true);
  // Asked directly, the server refuses it, and says why.
  const refused = await watcher.evaluate(async () => {
    const res = await fetch('/api/control', { method: 'POST', body: '{"command":"play"}' });
    return { status: res.status, body: await res.json() };
  });
  assert.equal(refused.status, 403);
  assert.match(refused.body.error, /needs the run's token/);
  // A malformed command with the token is refused too; the run goes on.
  const token = new URL(run.url).searchParams.get('token');
  const bad = await watcher.evaluate(async (t) => {
    const res = await fetch(`/api/control?token=${t}`, { method: 'POST', body: '{"command":"fly"}' });
    return { status: res.status, body: await res.json() };
  }, token);
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /unknown command 'fly'/);

  // The first page steps: both pages see the new tick.
  const page = browser.page;
  const t = (await state(page)).live.tick;
  await page.click('#run-step');
  await until(page, (l, st) => st.tick === t + 1, 'the stepping page');
  w = await until(watcher, (l, st) => l.tick === t + 1 && st.tick === t + 1, 'the watching page');
  // The watcher scrolls back over what the run has computed.
  await watcher.evaluate(() => window.fleetsimViewer.show(0));
  assert.equal((await state(watcher)).tick, 0);
});

test('the reset button takes the paused run back to tick 0 at once, recorded', async () => {
  const page = browser.page;
  let s = await until(page, (l) => l.state === 'paused', 'the paused run');
  const t = s.live.tick;
  assert.ok(t > 0);
  const first = await page.evaluate(() => window.fleetsimViewer.show(0).then(() =>
    window.fleetsimViewer.robot(0)));
  await page.click('#run-reset');
  s = await until(page, (l, st) => l.interventions === 1 && l.tick === 0, 'the reset landed');
  assert.equal(s.live.state, 'paused', 'a reset does not play the run');
  assert.match(s.live.intervention, new RegExp(`the run was reset at tick ${t} \\(back to tick 0\\); recorded in`));
  // The page follows the run back to its start: the world as it was at tick 0.
  await page.click('#run-follow');
  s = await until(page, (l, st) => st.tick === 0 && st.frame === st.frameCount - 1, 'the page at tick 0');
  const again = await page.evaluate(() => window.fleetsimViewer.robot(0));
  assert.deepEqual([again.id, again.x, again.y, again.theta], [first.id, first.x, first.y, first.theta]);
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(lines, [`${t} reset`]);
  await page.click('#run-step');
  await until(page, (l, st) => l.tick === 1 && st.tick === 1, 'a step after the reset');
});

test('a robot shift-dragged on the page moves at the next tick, recorded', async () => {
  const page = browser.page;
  let s = await until(page, (l) => l.state === 'paused', 'the paused run');
  const robot = await page.evaluate(() => window.fleetsimViewer.robot(0));
  const t = s.live.tick;
  // A paused run takes the drop at once; one onto a wall or another robot is refused (and
  // not recorded): then a drop elsewhere.
  let target = null;
  let said = s.live.intervention;
  for (const [dx, dy] of [[1, 0.5], [-1, 0.5], [1, -0.5], [-1, -0.5], [0.5, 1], [-0.5, -1],
    [0.6, 0], [-0.6, 0], [0, 0.6], [0, -0.6]]) {
    const drop = [robot.x + dx, robot.y + dy];
    const [sx, sy] = await toCanvas(page, robot.x, robot.y);
    const [tx, ty] = await toCanvas(page, ...drop);
    const box = await page.locator('#scene').boundingBox();
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + sx, box.y + sy);
    await page.mouse.down();
    await page.mouse.move(box.x + tx, box.y + ty, { steps: 8 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    s = await until(page, (l) => l.intervention !== said, 'what became of the drop');
    said = s.live.intervention;
    if (!said.startsWith('refused')) { target = drop; break; }
    assert.match(said, /^refused: cannot move robot \d+: /);
  }
  assert.ok(target, `every drop was refused: ${said}`);
  await page.click('#run-step'); // the run goes on from there
  s = await until(page, (l, st) => l.interventions === 2 && st.tick === t + 1, 'the move landed');
  assert.match(s.live.intervention, new RegExp(`robot ${robot.id} moved to .* at tick ${t}; recorded in`));
  assert.match(await page.textContent('#message'), /recorded in/);
  const moved = await page.evaluate((id) => {
    const v = window.fleetsimViewer;
    for (let i = 0; ; i++) { const r = v.robot(i); if (!r || r.id === id) return r; }
  }, robot.id);
  // Where it was dropped (to a pixel of the page's scale, plus one tick of motion).
  assert.ok(Math.hypot(moved.x - target[0], moved.y - target[1]) < 0.25,
    `robot ${robot.id} at (${moved.x}, ${moved.y}), dropped at (${target})`);
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.equal(lines.length, 2);
  assert.match(lines[1], new RegExp(`^${t} move ${robot.id} `));
  await screenshot(page, 'live-moved.png');
});

test('c sets the clicked robot\'s LEDs and Delete removes it, recorded', async () => {
  const page = browser.page;
  let s = await pausedAtNewest(page);
  const before = s.live.interventions;
  const robot = await page.evaluate(() => window.fleetsimViewer.robot(1));
  const [x, y] = await toCanvas(page, robot.x, robot.y);
  const box = await page.locator('#scene').boundingBox();
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction((id) => window.fleetsimViewer.state().selected?.id === id, robot.id);
  await page.keyboard.press('c');
  s = await until(page, (l) => l.interventions === before + 1, 'the LEDs set');
  assert.match(s.live.intervention, new RegExp(`robot ${robot.id}'s LEDs set to 255,0,0,255 at tick`));
  await page.keyboard.press('Delete');
  s = await until(page, (l) => l.interventions === before + 2, 'the robot removed');
  assert.match(s.live.intervention, new RegExp(`robot ${robot.id} removed at tick`));
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.match(lines.at(-2), new RegExp(` leds ${robot.id} 255,0,0,255$`));
  assert.match(lines.at(-1), new RegExp(` remove ${robot.id}$`));
});

test('a robot is added from the page where the user clicks, recorded', async () => {
  const page = browser.page;
  let s = await pausedAtNewest(page);
  const before = s.live.interventions;
  const count = await page.evaluate(() => window.fleetsimViewer.state().frameCount);
  // The spot of a robot removed (at once: the run is paused), zoomed in so that a pixel is a
  // few millimetres: free of walls and of the other robots.
  const robot = await page.evaluate(() => window.fleetsimViewer.robot(3));
  const box = await page.locator('#scene').boundingBox();
  let [x, y] = await toCanvas(page, robot.x, robot.y);
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction((id) => window.fleetsimViewer.state().selected?.id === id, robot.id);
  await page.keyboard.press('Delete');
  s = await until(page, (l) => l.interventions === before + 1, 'the robot removed');
  const metre = async () => (await toCanvas(page, robot.x + 1, robot.y))[0] - (await toCanvas(page, robot.x, robot.y))[0];
  const before1 = await metre();
  const now = await page.locator('#scene').boundingBox();
  await page.mouse.move(now.x + x, now.y + y);
  await page.mouse.wheel(0, -2000);
  for (let i = 0; i < 100 && (await metre()) < 5 * before1; i++) await page.waitForTimeout(20);
  assert.deepEqual(await page.$$eval('#add-kind option', (o) => o.map((e) => e.value)), ['epuck']);
  assert.deepEqual(await page.$$eval('#add-controller option', (o) => o.map((e) => e.value)), ['diffuse']);
  await page.click('#add-place');
  assert.equal((await state(page)).placing, true);
  // (The canvas where it is now: the run's messages above it may have moved it.)
  [x, y] = await toCanvas(page, robot.x, robot.y);
  const at = await page.locator('#scene').boundingBox();
  await page.mouse.click(at.x + x, at.y + y);
  s = await until(page, (l) => l.interventions === before + 2, 'the robot added');
  assert.match(s.live.intervention, /^robot (\d+) \(epuck\) added at \(([-\d.]+), ([-\d.]+)\) at tick \d+; recorded in/);
  const [, id, ax, ay] = s.live.intervention.match(/^robot (\d+) \(epuck\) added at \(([-\d.]+), ([-\d.]+)\)/);
  assert.ok(Math.hypot(ax - robot.x, ay - robot.y) < 0.01, `added at (${ax}, ${ay}), clicked (${robot.x}, ${robot.y})`);
  assert.equal(s.placing, false, 'one click places one robot');
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.match(lines.at(-1), /^\d+ add epuck diffuse \S+ \S+ 0$/);
  // It is in the run's next frame.
  const t = s.live.tick;
  await page.click('#run-step');
  await until(page, (l, st) => st.tick === t + 1 && st.frame === st.frameCount - 1 && st.frameCount > count, 'a step');
  const added = await page.evaluate((want) => {
    const v = window.fleetsimViewer;
    for (let i = 0; ; i++) { const r = v.robot(i); if (!r || r.id === want) return r; }
  }, Number(id));
  assert.ok(added, `robot ${id} is in the frame`);
  await page.dblclick('#scene', { position: { x: 3, y: 3 } }); // (fit the arena again)
});

test('the robot panel holds a command, releases it and refuses a global the controller lacks', async () => {
  const page = browser.page;
  let s = await pausedAtNewest(page);
  const before = s.live.interventions;
  const robot = await page.evaluate(() => window.fleetsimViewer.robot(2));
  const [x, y] = await toCanvas(page, robot.x, robot.y);
  const box = await page.locator('#scene').boundingBox();
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction((id) => window.fleetsimViewer.state().selected?.id === id, robot.id);
  assert.equal(await page.isVisible('#robot-controls'), true, 'the token holder gets the panel');
  // Its 8 proximity rays are drawn around it (their readings asked of the run).
  await page.waitForFunction(() => {
    const r = window.fleetsimViewer.state().rays;
    return r && r.idle + r.hit === 8;
  });
  await page.fill('#command-actuator', 'differential_drive');
  await page.fill('#command-values', '0.05 -0.05');
  await page.click('#command-hold');
  s = await until(page, (l) => l.interventions === before + 1, 'the command held');
  assert.match(s.live.intervention, new RegExp(`robot ${robot.id}'s 'differential_drive' held at 0.05,-0.05 from tick \\d+ \\(until released\\)`));
  // The held command turns the robot on the spot at the next step, whatever its controller says.
  const t = s.live.tick;
  await page.click('#run-step');
  await until(page, (l, st) => st.tick === t + 1 && st.frame === st.frameCount - 1, 'a step');
  const after = await page.evaluate((id) => {
    const v = window.fleetsimViewer;
    for (let i = 0; ; i++) { const r = v.robot(i); if (!r || r.id === id) return r; }
  }, robot.id);
  assert.ok(Math.hypot(after.x - robot.x, after.y - robot.y) < 1e-4, 'it did not move');
  assert.ok(Math.abs(after.theta - robot.theta) > 0.1, `it turned (${robot.theta} -> ${after.theta})`);
  await page.click('#command-release');
  s = await until(page, (l) => l.interventions === before + 2, 'the command released');
  assert.match(s.live.intervention, /left to its controller again/);
  // A global of a controller that has none (diffusion is built in): refused, not recorded.
  await page.fill('#param-name', 'speed');
  await page.fill('#param-value', '0.2');
  await page.click('#param-set');
  s = await until(page, (l) => /has no parameters to change/.test(l.intervention), 'the refusal');
  assert.equal(s.live.interventions, before + 2);
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.match(lines.at(-2), new RegExp(`^\\d+ command ${robot.id} differential_drive 0.05,-0.05$`));
  assert.match(lines.at(-1), new RegExp(`^\\d+ release ${robot.id} differential_drive$`));
});

test('the page says when the run has ended; the interventions file replays its log bytes', async () => {
  const page = browser.page;
  await page.selectOption('#run-speed', 'max');
  await until(page, (l) => l.speed === 0, 'as fast as possible');
  await page.click('#run-pause'); // resume
  await page.waitForFunction(() => document.body.dataset.run === 'ended', null, { timeout: 60000 });
  assert.match(await page.textContent('#message'), /the run has ended \(the run finished at tick 600\)/);
  assert.equal(await page.isDisabled('#run-step'), true);
  await second.page.waitForFunction(() => document.body.dataset.run === 'ended', null, { timeout: 10000 });
  await screenshot(page, 'live-ended.png');
  assert.equal(await run.exited, 0, run.err);
  const summary = JSON.parse(run.out.trim().split('\n').pop());
  const plain = JSON.parse(reference.out.trim().split('\n').pop());
  assert.notEqual(summary.state_hash, plain.state_hash, 'the moved robot changed the run');
  // Watching, pausing, stepping and pacing changed nothing; the reset and the move are in the
  // file.
  const replay = await runToEnd(['--interventions', RECORD, '--log', path.join(dir, 'replay.flog')]);
  assert.equal(replay.code, 0, replay.err);
  assert.equal(JSON.parse(replay.out.trim().split('\n').pop()).state_hash, summary.state_hash,
    'the replay ends in the session\'s state');
  assert.ok(fs.readFileSync(path.join(dir, 'live.flog')).equals(fs.readFileSync(path.join(dir, 'replay.flog'))),
    'the replay writes the session\'s log, byte for byte');
});
