// Frames streamed from the server in binary chunks (docs/view-format.md, "Wire format"), kept
// in a bounded cache and prefetched in the direction of playback: a 1 GB log is never loaded
// whole. A frame's columns are typed-array views on the received bytes (no copy), built from
// the column lists of the header (robotColumns, objectColumns): this file names no column.

const MAGIC = 0x43565346; // "FSVC"
const VERSION = 2;
const TARGET_CHUNK_BYTES = 4 << 20;
const CACHE_BYTES = 384 << 20;
const MAX_IN_FLIGHT = 2;

/** The typed array a column of each log type arrives as (f64 is sent as f32, tags as u32). */
const ARRAY_OF_TYPE = {
  u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f32: Float32Array,
  f64: Float32Array, color: Uint32Array, tag: Uint32Array,
};
/** Property names an entity set uses itself; a column of that name is only in `columns`. */
const RESERVED = new Set(['count', 'columns', 'widths']);

/** Bytes per entity of a column list as sent (before padding). */
export function bytesPerEntity(columns) {
  let n = 0;
  for (const c of columns) n += (ARRAY_OF_TYPE[c.type]?.BYTES_PER_ELEMENT ?? 4) * c.width;
  return n;
}

/**
 * Parses one chunk with the column lists of `header` (robotColumns, objectColumns); returns
 * { first, frames } or throws an Error with a readable message. A frame is
 * { index, tick, timeNs, status, tags, robots, objects }; robots and objects are
 * { count, columns: {name: TypedArray}, widths: {name: width} } with each column also a
 * property of its own name (robots.x, robots.leds, objects.size, ...): `width` elements per
 * entity, entity i's at [i * width, (i + 1) * width).
 */
export function parseChunk(buffer, header) {
  const dv = new DataView(buffer);
  if (buffer.byteLength < 20 || dv.getUint32(0, true) !== MAGIC) {
    throw new Error('the server sent something that is not a frame chunk');
  }
  const version = dv.getUint32(4, true);
  if (version !== VERSION) {
    throw new Error(`frame chunk version ${version} (this page reads version ${VERSION}; reload)`);
  }
  const count = dv.getUint32(8, true);
  const first = dv.getUint32(12, true);
  const decoder = new TextDecoder();
  let at = 16;
  const need = (n) => {
    if (at + n > buffer.byteLength) throw new Error(`frame chunk from frame ${first} is truncated`);
  };
  const str = () => {
    need(4);
    const n = dv.getUint32(at, true);
    need(4 + n);
    const s = decoder.decode(new Uint8Array(buffer, at + 4, n));
    at = (at + 4 + n + 3) & ~3;
    return s;
  };
  const column = (Type, n) => {
    need(n * Type.BYTES_PER_ELEMENT);
    const a = new Type(buffer, at, n);
    at = (at + n * Type.BYTES_PER_ELEMENT + 3) & ~3;
    return a;
  };
  const entities = (n, list) => {
    const e = { count: n, columns: {}, widths: {} };
    for (const c of list) {
      const Type = ARRAY_OF_TYPE[c.type];
      if (!Type) throw new Error(`column '${c.name}' has type ${c.type}, which this page cannot read`);
      const a = column(Type, n * c.width);
      e.columns[c.name] = a;
      e.widths[c.name] = c.width;
      if (!RESERVED.has(c.name)) e[c.name] = a;
    }
    return e;
  };
  need(4);
  const tagCount = dv.getUint32(at, true);
  at += 4;
  const tags = [];
  for (let i = 0; i < tagCount; i++) tags.push(str());
  const frames = [];
  for (let f = 0; f < count; f++) {
    const start = at;
    need(28);
    const bytes = dv.getUint32(at, true);
    const tick = dv.getFloat64(at + 4, true);
    const timeNs = dv.getFloat64(at + 12, true);
    const n = dv.getUint32(at + 20, true);
    const m = dv.getUint32(at + 24, true);
    at += 28;
    const status = str();
    const robots = entities(n, header.robotColumns);
    const objects = entities(m, header.objectColumns);
    if (at - start !== bytes) throw new Error(`frame ${first + f} of the chunk is malformed`);
    frames.push({ index: first + f, tick, timeNs, status, tags, robots, objects });
  }
  return { first, frames };
}

/** Fetches, caches and prefetches frames. `onError(message)` reports failures once each. */
export class FrameStore {
  constructor(header, onError) {
    this.header = header;
    this.count = header.frameCount;
    const perFrame = 64 + header.robots.ids.length * bytesPerEntity(header.robotColumns) +
      header.objects.ids.length * bytesPerEntity(header.objectColumns);
    this.chunkFrames = Math.max(1, Math.min(512, Math.floor(TARGET_CHUNK_BYTES / perFrame)));
    this.frames = new Map(); // frame index -> frame
    this.chunks = new Map(); // chunk index -> { state, bytes, used }
    this.inFlight = 0;
    this.queue = [];
    this.onError = onError;
    this.failed = null; // first error message, stops further loading of that chunk
    this.onLoad = () => {};
    this.decoder = 'main thread';
    this.decodeMs = null; // decoding times (ms), while a benchmark collects them
  }

  chunkOf(i) { return Math.floor(i / this.chunkFrames); }

  /** The frame if loaded (and marks it used), else null and starts loading it. */
  get(i) {
    const f = this.frames.get(i);
    const k = this.chunkOf(i);
    const c = this.chunks.get(k);
    if (c) c.used = performance.now();
    if (f) return f;
    // A chunk loaded while the run had not computed all its frames yet: load the rest.
    if (c && c.state === 'loaded') this.chunks.delete(k);
    this.request(k, true);
    return null;
  }

  /** A live run's frames grow: `count` frames now, the oldest still held `first`. */
  setCount(count, first = 0) {
    this.count = count;
    this.first = first;
  }

  has(i) { return this.frames.has(i); }

  /** Starts loading the chunks ahead of frame `i` in direction `dir` (+1 / -1). */
  prefetch(i, dir, ahead = 2) {
    const k = this.chunkOf(i);
    for (let d = 1; d <= ahead; d++) {
      const kk = k + d * (dir < 0 ? -1 : 1);
      if (kk >= 0 && kk * this.chunkFrames < this.count) this.request(kk, false);
    }
  }

  /** Forgets the requests not started yet for chunks before the one of frame `i`. */
  dropQueuedBefore(i) {
    const first = this.chunkOf(i);
    this.queue = this.queue.filter((k) => {
      if (k >= first) return true;
      if (this.chunks.get(k)?.state === 'queued') this.chunks.delete(k);
      return false;
    });
  }

  request(k, urgent) {
    if (this.chunks.has(k)) return;
    this.chunks.set(k, { state: 'queued', bytes: 0, used: performance.now() });
    if (urgent) this.queue.unshift(k); else this.queue.push(k);
    this.pump();
  }

  pump() {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length) {
      const k = this.queue.shift();
      const c = this.chunks.get(k);
      if (!c || c.state !== 'queued') continue;
      c.state = 'loading';
      this.inFlight++;
      this.load(k, c).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  async load(k, c) {
    const first = k * this.chunkFrames;
    const end = Math.min(this.count, first + this.chunkFrames);
    let next = Math.max(first, this.first || 0);
    while (next < end && this.frames.has(next)) next++; // (a live chunk's frames so far)
    try {
      while (next < end) {
        const res = await fetch(`/api/frames?start=${next}&count=${end - next}`);
        if (!res.ok) {
          let message = `HTTP ${res.status}`;
          try { message = (await res.json()).error || message; } catch { /* not JSON */ }
          throw new Error(message);
        }
        const buf = await res.arrayBuffer();
        const d0 = performance.now();
        const { frames } = parseChunk(buf, this.header);
        if (this.decodeMs) this.decodeMs.push(performance.now() - d0);
        if (frames.length === 0) throw new Error(`no frames returned from frame ${next}`);
        for (const f of frames) this.frames.set(f.index, f);
        c.bytes += buf.byteLength;
        next += frames.length;
      }
      c.state = 'loaded';
      this.evict();
      this.onLoad(k);
    } catch (e) {
      c.state = 'failed';
      const message = e instanceof TypeError
        ? 'lost contact with the fleetsim view server (was it stopped?)'
        : e.message;
      this.failed = message;
      this.onError(message, first + (next - first));
      // A dropped connection may come back: allow a retry later.
      setTimeout(() => { if (this.chunks.get(k) === c) this.chunks.delete(k); }, 3000);
    }
  }

  evict() {
    let total = 0;
    for (const c of this.chunks.values()) total += c.bytes;
    if (total <= CACHE_BYTES) return;
    const loaded = [...this.chunks.entries()].filter(([, c]) => c.state === 'loaded')
      .sort((a, b) => a[1].used - b[1].used);
    for (const [k, c] of loaded) {
      if (total <= CACHE_BYTES || loaded.length - 0 <= 3) break;
      const first = k * this.chunkFrames;
      for (let i = first; i < first + this.chunkFrames; i++) this.frames.delete(i);
      this.chunks.delete(k);
      total -= c.bytes;
    }
  }
}
