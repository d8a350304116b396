// Bad logs: a clear message on the terminal (and in the page when it is already open), never
// a blank page or a crash.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startView, runView, openBrowser, load, state, screenshot, expected, log,
} from './lib.mjs';

const exp = expected();
let browser, page;
before(async () => { browser = await openBrowser(); page = browser.page; });
after(async () => { await browser?.close(); });

for (const [name, pattern] of [
  ['missing.flog', /fleetsim view: error: .*missing\.flog/],
  ['not-a-log.flog', /fleetsim view: error: .*is not a fleetsim log/],
  ['cut-header.flog', /fleetsim view: error: .*cut-header\.flog.*(truncated|incomplete)/],
]) {
  test(`${name} is refused with a message and status 2`, async () => {
    const r = await runView([log(name)]);
    assert.equal(r.code, 2, `status (stderr: ${r.err})`);
    assert.equal(r.signal, null, 'no crash');
    assert.match(r.err, pattern);
    assert.equal(r.err.trim().split('\n').length, 1, `one clear line:\n${r.err}`);
  });
}

test('a log cut mid-run opens and shows its complete frames', async () => {
  const server = await startView([log('truncated.flog')]);
  try {
    assert.ok(exp.truncatedFrames > 0 && exp.truncatedFrames < exp.frames);
    assert.match(server.out, new RegExp(`${exp.truncatedFrames} frames`));
    await load(page, server.url);
    const s = await state(page);
    assert.equal(s.frameCount, exp.truncatedFrames);
    await page.evaluate((k) => window.fleetsimViewer.show(k), exp.truncatedFrames - 1);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('a corrupted frame is reported in the terminal and in the open page', async () => {
  assert.ok(exp.corruptFrame >= 0, 'make_test_log found a corruption the reader detects late');
  const server = await startView([log('corrupt.flog')]);
  try {
    await load(page, server.url); // the frames before the damaged one show
    await page.evaluate((k) => window.fleetsimViewer.show(k).catch(() => {}), exp.corruptFrame);
    await page.waitForSelector('#message:not([hidden])', { timeout: 10000 });
    const message = await page.textContent('#message');
    assert.match(message, /cannot read the log: .*corrupt/);
    assert.match(message, new RegExp(`frame ${exp.corruptFrame}`));
    await screenshot(page, 'bad-input-corrupt.png');
    // The page still draws (the last good frame), and the terminal said it too.
    assert.notEqual(await page.evaluate(() => window.fleetsimViewer.state().shownFrame), null);
    await page.waitForTimeout(100);
    assert.match(server.err, new RegExp(`fleetsim view: error: .*frame ${exp.corruptFrame}.*corrupt`));
  } finally {
    assert.equal(await server.stop(), 0, 'the server survives a corrupted frame');
  }
});

test('the open page says so when the server is stopped', async () => {
  const server = await startView([log('example.flog')]);
  await load(page, server.url);
  assert.equal(await server.stop(), 0);
  await page.waitForSelector('#message:not([hidden])', { timeout: 6000 });
  assert.match(await page.textContent('#message'), /lost contact with the fleetsim view server/);
  // Still drawing what it had.
  assert.notEqual((await state(page)).shownFrame, null);
  await screenshot(page, 'bad-input-server-stopped.png');
});
