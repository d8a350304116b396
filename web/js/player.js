// Playback state, as in the DEECo playground: play/pause, rewind / fast-forward while an
// arrow key is held, faster / slower, restart. Positions are in frames (a frame is logged
// every `every` ticks); speeds are in ticks per second, as in the view configuration.

// An arrow key held longer than this seeks continuously; a tap moves exactly one frame.
const HOLD_S = 0.25;

export class Player {
  constructor({ frameCount, every, tickPeriodNs, speed, seekSpeed }) {
    this.frameCount = frameCount;
    this.every = Math.max(1, every || 1);
    // Speed 0 in the configuration means real time: one simulated second per second.
    const realTime = tickPeriodNs > 0 ? 1e9 / tickPeriodNs : 10;
    this.speed = speed > 0 ? speed : realTime;
    this.seekFactor = seekSpeed > 0 ? seekSpeed / this.speed : 10;
    this.position = 0; // fractional frame index
    this.playing = true;
    this.seek = 0; // -1 rewinding, +1 fast-forwarding (while the key is held)
    this.seekHeld = 0; // seconds the arrow key has been held
    this.listeners = [];
  }

  get frame() { return Math.min(this.frameCount - 1, Math.max(0, Math.floor(this.position))); }
  get seekSpeed() { return this.speed * this.seekFactor; }
  get mode() {
    if (this.seek > 0) return 'fast-forward';
    if (this.seek < 0) return 'rewind';
    if (this.playing && this.atEnd()) return 'ended';
    return this.playing ? 'playing' : 'paused';
  }
  atEnd() { return this.position >= this.frameCount - 1; }

  changed() { for (const l of this.listeners) l(); }

  /** Frames per second of wall time at the current mode (signed). */
  rate() {
    if (this.seek !== 0 && this.seekHeld >= HOLD_S) return this.seek * this.seekSpeed / this.every;
    return this.playing ? this.speed / this.every : 0;
  }

  /**
   * Advances by `dt` seconds of wall time. `loaded(i)` says whether frame i is available:
   * playback never runs past a frame that is not loaded yet (it waits, "buffering").
   */
  advance(dt, loaded) {
    if (this.seek !== 0) this.seekHeld += dt;
    const r = this.rate();
    if (r === 0 || this.frameCount === 0) return false;
    const before = this.frame;
    let p = this.position + r * Math.min(dt, 0.25);
    p = Math.max(0, Math.min(this.frameCount - 1, p));
    // Do not skip past a missing frame: stop at the last loaded one on the way.
    const target = Math.floor(p);
    const step = target >= before ? 1 : -1;
    for (let i = before + step; step > 0 ? i <= target : i >= target; i += step) {
      if (!loaded(i)) {
        this.buffering = true;
        this.position = i - step + (step > 0 ? 0.999 : 0);
        return this.frame !== before;
      }
    }
    this.buffering = false;
    this.position = p;
    if (this.seek < 0 && p <= 0) this.seek = 0;
    return this.frame !== before;
  }

  togglePlay() {
    if (!this.playing && this.atEnd()) this.position = 0;
    this.playing = !this.playing;
    this.changed();
  }
  setPlaying(on) { this.playing = on; this.changed(); }
  /** Arrow pressed: one frame at once (visible even when paused), then seeking while held. */
  startSeek(dir) {
    this.step(dir);
    this.seek = dir;
    this.seekHeld = 0;
    this.changed();
  }
  stopSeek() { this.seek = 0; this.changed(); }
  step(dir) {
    this.position = Math.max(0, Math.min(this.frameCount - 1, Math.floor(this.position) + dir));
    this.changed();
  }
  faster() { this.speed = Math.min(1e7, this.speed * 2); this.changed(); }
  slower() { this.speed = Math.max(1e-3, this.speed / 2); this.changed(); }
  restart() { this.position = 0; this.playing = true; this.seek = 0; this.changed(); }
  goTo(i) {
    this.position = Math.max(0, Math.min(this.frameCount - 1, i));
    this.changed();
  }
}
