// The robot panel on a live run of Lua controllers (`fleetsim run --view`): a clicked robot's
// panel shows its sensors (the logged columns) and its script's globals; a global set from the
// panel reaches the script and is recorded; one of the wrong type is refused, the run going
// on; the interventions file replays the session's log bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FLEETSIM, openBrowser, load, state, toCanvas, startLiveRun, screenshot, pixel, near } from './lib.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-live-lua-'));
const RECORD = path.join(dir, 'session.interventions');
fs.writeFileSync(path.join(dir, 'steered.lua'), `speed = 5
mode = "forward"
function step()
  if mode == "forward" then robot.wheels.set_velocity(speed, speed)
  else robot.wheels.set_velocity(-speed, speed) end
end
`);
fs.writeFileSync(path.join(dir, 'steered.xml'), `<fleetsim>
  <framework ticks_per_second="10" length="3" seed="3"/>
  <controllers><controller id="s" type="lua" script="steered.lua"/></controllers>
  <arena size="4,4"><distribute count="6" kind="epuck" controller="s"/></arena>
  <log path="steered.flog" format="frames"/>
</fleetsim>
`);
const EXPERIMENT = path.join(dir, 'steered.xml');

let run, browser;
before(async () => {
  run = await startLiveRun(EXPERIMENT, ['--view-paused', '--log', path.join(dir, 'live.flog'),
    '--record-interventions', RECORD], dir);
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  if (run && run.code === undefined) run.proc.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

async function until(page, pred, what, timeout = 15000) {
  const t0 = Date.now();
  for (;;) {
    const s = await state(page);
    if (s.live && pred(s.live, s)) return s;
    if (Date.now() - t0 > timeout) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(s.live)}`);
    await page.waitForTimeout(50);
  }
}

async function clickRobot(page, i) {
  const robot = await page.evaluate((k) => window.fleetsimViewer.robot(k), i);
  const [x, y] = await toCanvas(page, robot.x, robot.y);
  const box = await page.locator('#scene').boundingBox();
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction((id) => window.fleetsimViewer.state().selected?.id === id, robot.id);
  return robot;
}

test('the panel shows sensors and script globals; a global set there is recorded and replayed', async () => {
  const page = browser.page;
  await load(page, run.url);
  await until(page, (l) => l.state === 'paused', 'the paused run');
  // Halfway along its third proximity ray (90 degrees left of its heading, 0.035 + 0.05 m from
  // its centre): the floor before it is clicked, the ray's grey or red after.
  const r1 = await page.evaluate(() => window.fleetsimViewer.robot(1));
  const [rx, ry] = await toCanvas(page, r1.x - 0.085 * Math.sin(r1.theta), r1.y + 0.085 * Math.cos(r1.theta));
  const around = async () => {
    const out = [];
    for (const dx of [-1, 0, 1]) for (const dy of [-1, 0, 1]) out.push(await pixel(page, [rx + dx, ry + dy]));
    return out;
  };
  assert.ok((await around()).every((p) => near(p, [255, 255, 255], 3)), 'the floor beside the robot');
  const robot = await clickRobot(page, 1);
  await page.waitForFunction(() => window.fleetsimViewer.state().rays?.idle + window.fleetsimViewer.state().rays?.hit === 8);
  const onRay = await around();
  assert.ok(onRay.some((p) => near(p, [143, 143, 143], 20) || near(p, [230, 26, 26], 40)),
    `a ray is drawn there: ${JSON.stringify(onRay)}`);
  await page.waitForFunction(() => /global speed = 5/.test(document.getElementById('info').textContent));
  let info = await page.textContent('#info');
  assert.match(info, /global mode = "forward"/);
  assert.match(info, /proximity/, 'its sensors: the logged proximity readings');
  await screenshot(page, 'live-lua-panel.png');

  // A value of the wrong kind is refused, with the reason; the run goes on.
  await page.fill('#param-name', 'speed');
  await page.fill('#param-value', '"fast"');
  await page.click('#param-set');
  let s = await until(page, (l) => /refused/.test(l.intervention || ''), 'the refusal');
  assert.match(s.live.intervention, /global 'speed' of robot \d+'s script is a number, not a string/);
  assert.equal(s.live.interventions, 0);

  await page.fill('#param-value', '0.25');
  await page.click('#param-set');
  s = await until(page, (l) => l.interventions === 1, 'the global set');
  assert.match(s.live.intervention, new RegExp(`global 'speed' of robot ${robot.id}'s script set to 0.25 at tick 0`));
  // The panel reads it back from the script.
  await page.click('#run-step');
  await until(page, (l, st) => st.tick === 1 && st.frame === st.frameCount - 1, 'one step');
  await clickRobot(page, 1);
  await page.waitForFunction(() => /global speed = 0.25/.test(document.getElementById('info').textContent));
  const lines = fs.readFileSync(RECORD, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(lines, [`0 param ${robot.id} speed 0.25`]);

  await page.click('#run-pause'); // resume to the end
  assert.equal(await run.exited, 0, run.err);
  const replay = spawnSync(FLEETSIM, ['run', EXPERIMENT, '--quiet', '--json', '--interventions', RECORD,
    '--log', path.join(dir, 'replay.flog')], { cwd: dir, encoding: 'utf8' });
  assert.equal(replay.status, 0, replay.stderr);
  const hash = (out) => JSON.parse(out.trim().split('\n').pop()).state_hash;
  assert.equal(hash(replay.stdout), hash(run.out));
  assert.ok(fs.readFileSync(path.join(dir, 'live.flog')).equals(fs.readFileSync(path.join(dir, 'replay.flog'))),
    'the replay writes the session\'s log, byte for byte');
});
