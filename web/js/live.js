// A run watched as it is computed (`fleetsim run --view`, docs/view-format.md, "Live view").
// The frames come as a replay's do (/api/frames, the same chunks and decoder); this file only
// follows the run's status with a long poll of /api/live (the frame count grows, the run is
// paused, paced or ended) and sends the run's controls (/api/control) when the page's URL
// carries the run's token.

const SPEEDS = ['max', '0.25', '0.5', '1', '2', '5', '10', '100'];

export class LiveLink {
  /**
   * `onStatus(status)` after every answer; `onEnd(status)` once when the run has ended;
   * `onLost()` once when the server cannot be reached (and the run was not known to end).
   */
  constructor({ onStatus, onEnd, onLost }) {
    this.token = new URLSearchParams(location.search).get('token') || '';
    this.status = null;
    this.follow = true; // show the newest frame as it comes
    this.onStatus = onStatus;
    this.onEnd = onEnd;
    this.onLost = onLost;
    this.stopped = false;
  }

  get canControl() { return !!(this.status && this.status.control); }

  url(path, params = {}) {
    const q = new URLSearchParams(params);
    if (this.token) q.set('token', this.token);
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  }

  /** Polls until the run ends or the server goes. */
  async run() {
    let failures = 0;
    while (!this.stopped) {
      const params = this.status
        ? { frames: this.status.frames, version: this.status.version } : {};
      try {
        const res = await fetch(this.url('/api/live', params), { cache: 'no-store' });
        const body = await res.json();
        if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
        failures = 0;
        this.status = body;
        this.onStatus(body);
        if (body.state === 'ended') {
          this.stopped = true;
          this.onEnd(body);
          return;
        }
      } catch (e) {
        if (!(e instanceof TypeError)) { // the server answered, but refused
          this.stopped = true;
          this.onLost(e.message);
          return;
        }
        if (++failures >= 3) {
          this.stopped = true;
          this.onLost(null);
          return;
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  }

  /** Sends a control command; resolves to null, or the server's reason for refusing it. */
  async control(command, value, fields = {}) {
    const body = { command, ...fields };
    if (value !== undefined) body.value = value;
    try {
      const res = await fetch(this.url('/api/control'), {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      });
      const reply = await res.json().catch(() => ({}));
      if (!res.ok) return reply.error || `HTTP ${res.status}`;
      return null;
    } catch {
      return 'cannot reach the run (has it ended?)';
    }
  }
}

/** The speed menu's entries: 'max' or simulated seconds per wall second. */
export function speedOptions() { return SPEEDS; }
