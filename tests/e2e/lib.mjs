// Shared set-up of the viewer's browser tests: start `fleetsim view`, launch Debian's
// chromium through playwright-core, read the page's state through window.fleetsimViewer.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const FLEETSIM = process.env.FLEETSIM || path.resolve('build/fleetsim');
export const LOGS = process.env.E2E_LOGS || path.resolve('build/tests/e2e/logs');
export const ARTIFACTS = process.env.E2E_ARTIFACTS || path.resolve('build/e2e-artifacts');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let playwright;
try {
  playwright = await import('playwright-core');
} catch {
  console.error('playwright-core is not installed: run scripts/install-deps.sh (npm ci in tests/e2e)');
  process.exit(77);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} not found: run scripts/install-deps.sh`);
  process.exit(77);
}
fs.mkdirSync(ARTIFACTS, { recursive: true });

export const expected = () => JSON.parse(fs.readFileSync(path.join(LOGS, 'expect.json'), 'utf8'));
export const log = (name) => path.join(LOGS, name);

/** Runs `fleetsim view ARGS` to completion (for inputs it must refuse). */
export function runView(args, timeoutMs = 10000) {
  return new Promise((resolve) => {
    const p = spawn(FLEETSIM, ['view', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code, signal) => { clearTimeout(timer); resolve({ code, signal, out, err }); });
  });
}

/** Starts `fleetsim view ARGS --port 0`; resolves once it prints its URL. */
export function startView(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(FLEETSIM, ['view', ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const server = { proc: p, out: '', err: '', url: null };
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${server.out}${server.err}`)), 10000);
    p.stdout.on('data', (d) => {
      server.out += d;
      const m = server.out.match(/http:\/\/[^\s]+\//);
      if (m && !server.url) { server.url = m[0]; clearTimeout(timer); resolve(server); }
    });
    p.stderr.on('data', (d) => { server.err += d; });
    p.on('exit', (code) => {
      server.exitCode = code;
      if (!server.url) { clearTimeout(timer); reject(new Error(`exited ${code}:\n${server.err}`)); }
    });
    server.stop = () => new Promise((res) => {
      if (server.exitCode !== undefined) return res(server.exitCode);
      p.on('exit', (code) => res(code));
      p.kill('SIGINT');
    });
  });
}

/** Chromium with a fresh profile; returns { page, close }. */
export async function openBrowser({ width = 1000, height = 700 } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetsim-e2e-'));
  const context = await playwright.chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width, height },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return {
    page,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Loads the viewer page and waits for its first drawn frame. */
export async function load(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.fleetsimViewer || document.body.dataset.error,
    null, { timeout: 15000 });
  const error = await page.evaluate(() => document.body.dataset.error);
  if (error) throw new Error(`page error: ${error}`);
  await page.evaluate(() => window.fleetsimViewer.ready);
}

export const state = (page) => page.evaluate(() => window.fleetsimViewer.state());
export const pixel = (page, [x, y]) => page.evaluate(([a, b]) => window.fleetsimViewer.pixel(a, b), [x, y]);
export const toCanvas = (page, x, y) => page.evaluate(([a, b]) => window.fleetsimViewer.worldToCanvas(a, b), [x, y]);
export const show = (page, i) => page.evaluate((k) => window.fleetsimViewer.show(k), i);

/** True when two RGBA colours are within `tol` per channel. */
export function near(a, b, tol = 12) {
  return a.slice(0, 3).every((v, i) => Math.abs(v - b[i]) <= tol);
}

/** A point inside robot `r` (absolute world metres), away from its heading mark and rim. */
export function insideRobot(r) {
  return [r.x - 0.45 * r.radius * Math.cos(r.theta), r.y - 0.45 * r.radius * Math.sin(r.theta)];
}

export async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, name) });
}

/**
 * Starts `fleetsim run EXPERIMENT --json --view --port 0 ARGS` in `cwd`; resolves once it prints
 * its URL: { proc, out, err, url, code, exited }.
 */
export function startLiveRun(experiment, args, cwd) {
  return new Promise((resolve, reject) => {
    const p = spawn(FLEETSIM, ['run', experiment, '--json', '--view', '--port', '0', ...args], { cwd });
    const run = { proc: p, out: '', err: '', url: null, code: undefined };
    run.exited = new Promise((res) => p.on('exit', (code) => { run.code = code; res(code); }));
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${run.out}${run.err}`)), 20000);
    p.stdout.on('data', (d) => {
      run.out += d;
      const m = run.out.match(/http:\/\/[^\s]+\?token=[0-9a-f]+/);
      if (m && !run.url) { run.url = m[0]; clearTimeout(timer); resolve(run); }
    });
    p.stderr.on('data', (d) => { run.err += d; });
    p.on('exit', (code) => { if (!run.url) { clearTimeout(timer); reject(new Error(`exited ${code}:\n${run.err}`)); } });
  });
}
