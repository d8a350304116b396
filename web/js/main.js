// The fleetsim viewer page: loads the header and view configuration, streams frames, draws
// them in the configured layer order, and handles the keyboard (DEECo playground keys) and
// the mouse (wheel zoom, drag pan, click a robot).
//
// window.fleetsimViewer is the page's test and benchmark hook (tests/e2e).

import { LiveLink, speedOptions } from './live.js';
import { FrameStore } from './frames.js';
import { Player } from './player.js';
import { LayerColoring, cssColor } from './colorings.js';
import { GlRenderer } from './gl_renderer.js';
import { CanvasRenderer } from './canvas_renderer.js';

const $ = (id) => document.getElementById(id);
const OUTSIDE = [0.85, 0.855, 0.865, 1];
const FLOOR = [1, 1, 1, 1];
const MAX_LABELS = 3000;
// LED dots of kinds with several LEDs (docs/view-format.md): the ring LEDs at RING x the body
// radius from the centre, dots of RING_DOT x the radius; the beacon at the centre, BEACON x
// the radius. Drawn once a robot is LED_MIN_PIXELS (device pixels) in radius on screen.
const RING = 0.75;
const RING_DOT = 0.15;
const BEACON = 0.3;
const LED_MIN_PIXELS = 6;
/** How much larger a flyer is drawn per metre of altitude (the `z` column). */
const ALTITUDE_GROWTH = 0.25;
// Range-and-bearing links, device pixels wide.
const RAB_LINE_PIXELS = 1.5;
// The clicked robot's trail (t): its positions over the last TRAIL_SECONDS of simulated time,
// from the frames the page holds; TRAIL_PIXELS wide, under the robots.
const TRAIL_SECONDS = 10;
const TRAIL_PIXELS = 2;
const TRAIL_COLOR = [0.15, 0.15, 0.15, 0.85];
// The selected robot's proximity rays (a kind's `rays` in the header): from its body's
// bounding circle out to the sensor's range, RAY_PIXELS wide; grey where the reading is 0,
// red where it sees something. Live, readings the log does not carry are asked of the run
// every RAY_REFRESH_MS.
const RAY_PIXELS = 1.5;
const RAY_IDLE = [0.45, 0.45, 0.45, 0.8];
const RAY_HIT = [0.9, 0.1, 0.1, 0.95];
const RAY_REFRESH_MS = 500;
// Live, following the run: how far back from the newest frame to look for one that arrived.
const FOLLOW_SEARCH = 64;

const ui = {
  canvas: $('scene'), status: $('status'), title: $('title'), message: $('message'),
  info: $('info'), play: $('play'), state: $('state'), timeline: $('timeline'),
  clock: $('clock'), speed: $('speed'), fps: $('fps'),
  live: $('live'), runState: $('run-state'), runPause: $('run-pause'), runStep: $('run-step'),
  runReset: $('run-reset'), runSpeed: $('run-speed'), runFollow: $('run-follow'),
  robotControls: $('robot-controls'), commandActuator: $('command-actuator'),
  commandValues: $('command-values'), commandRelease: $('command-release'),
  paramName: $('param-name'), paramValue: $('param-value'), paramSet: $('param-set'),
  addKind: $('add-kind'), addController: $('add-controller'), addPlace: $('add-place'),
};

function showMessage(text, kind = 'error') {
  ui.message.textContent = text;
  ui.message.className = kind === 'error' ? '' : 'note';
  ui.message.hidden = false;
  if (kind === 'error') document.body.dataset.error = text;
}

async function fetchJson(url) {
  let res;
  try {
    res = await fetch(url);
  } catch {
    throw new Error('cannot reach the fleetsim view server (was it stopped?)');
  }
  if (!res.ok) {
    let m = `HTTP ${res.status} for ${url}`;
    try { m = (await res.json()).error || m; } catch { /* not JSON */ }
    throw new Error(m);
  }
  return res.json();
}

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error(`cannot load image ${url}`));
    img.src = url;
  });
}

function makeRenderer(canvas) {
  const force = new URLSearchParams(location.search).get('renderer');
  if (force !== 'canvas2d') {
    try {
      return new GlRenderer(canvas);
    } catch (e) {
      console.warn('WebGL2 unavailable, using Canvas2D:', e.message);
    }
  }
  // A canvas that had a failed WebGL context cannot give a 2D one: use a fresh canvas.
  const fresh = document.createElement('canvas');
  fresh.id = canvas.id;
  fresh.tabIndex = 0;
  fresh.setAttribute('aria-label', canvas.getAttribute('aria-label'));
  canvas.replaceWith(fresh);
  ui.canvas = fresh;
  return new CanvasRenderer(fresh);
}

class Viewer {
  constructor(header, config, renderer) {
    this.header = header;
    this.config = config;
    this.renderer = renderer;
    this.store = new FrameStore(header, (message) => this.onLoadError(message));
    this.player = new Player({
      frameCount: header.frameCount, every: header.every, tickPeriodNs: header.tickPeriodNs,
      speed: config.speed, seekSpeed: config.seekSpeed,
    });
    this.camera = { scale: 1, cx: 0, cy: 0 };
    this.frame = null;
    this.dirty = true;
    this.fpsSamples = [];
    this.sizes = new WeakMap();
    this.boxes = new WeakMap();
    this.ledDotCache = new WeakMap();
    this.rabCache = new WeakMap();
    this.ledKeys = new Map();
    this.overlays = new Map();
    this.textureLayers = new Map();
    this.images = new Map();
    this.customs = new Map();
    this.selected = null;
    this.bench = null;
    this.trailOn = false; // t: the selected robot's trail
    this.following = false; // f: the camera follows the selected robot
    this.trailCache = null;
  }

  async init() {
    const h = this.header;
    // Textures and images the configuration names.
    const urls = new Set();
    for (const l of this.config.layers) {
      if (l.coloring.texture) urls.add(l.coloring.texture);
      for (const r of l.rules || []) if (r.coloring.texture) urls.add(r.coloring.texture);
    }
    for (const url of urls) {
      try {
        this.images.set(url, await loadImage(url));
      } catch (e) {
        showMessage(e.message + ' (drawn in its colour instead)', 'note');
      }
    }
    const textureLayer = (url) => {
      if (!this.images.has(url)) return -1;
      if (!this.textureLayers.has(url)) {
        this.textureLayers.set(url, this.renderer.addEntityTexture(this.images.get(url)));
      }
      return this.textureLayers.get(url);
    };
    this.colorings = new Map();
    for (const l of this.config.layers) {
      if (l.type === 'robots') this.colorings.set(l, new LayerColoring(l, h.kinds, textureLayer));
      if (l.type === 'objects') this.colorings.set(l, new LayerColoring(l, h.objectClasses, textureLayer));
      if (l.type === 'custom' && l.script) {
        try {
          const mod = await import(l.script);
          this.customs.set(l, mod.create(l.arg, { header: h }));
        } catch (e) {
          showMessage(`custom layer (line ${l.line}): ${e.message}`, 'note');
        }
      }
    }
    // Obstacle map.
    let bitmapBytes = null;
    if (h.bitmap) {
      const res = await fetch('/api/bitmap');
      bitmapBytes = new Uint8Array(await res.arrayBuffer());
      if (bitmapBytes.length !== h.bitmap.width * h.bitmap.height) bitmapBytes = null;
    }
    this.renderer.setMap(h.bitmap, bitmapBytes, h.segments);

    ui.title.textContent = `${h.log} · ${h.format} log · ${h.frameCount} frames · ` +
      `${h.robots.ids.length} robots · ${this.renderer.name}`;
    ui.status.style.color = cssColor(this.config.statusColor);
    ui.timeline.max = Math.max(0, h.frameCount - 1);
    this.fit();
    this.player.listeners.push(() => { this.dirty = true; });
    this.store.onLoad = () => { this.dirty = true; };
    if (h.frameCount === 0) showMessage('this log has no complete frame yet: only the arena is shown', 'note');
  }

  /** Fits the arena (and bitmap) in the window, times the configured zoom. */
  fit() {
    const { width, height } = this.size();
    const h = this.header;
    let w = h.arena.width || 1, hh = h.arena.height || 1;
    if (h.bitmap) {
      w = Math.max(w, h.bitmap.width * h.bitmap.resolution);
      hh = Math.max(hh, h.bitmap.height * h.bitmap.resolution);
    }
    this.camera.scale = Math.min(width / (w * 1.06), height / (hh * 1.06)) * (this.config.zoom || 1);
    this.camera.cx = 0;
    this.camera.cy = 0;
    this.dirty = true;
  }

  size() {
    const r = ui.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    return { width: Math.max(1, Math.round(r.width * dpr)), height: Math.max(1, Math.round(r.height * dpr)), dpr };
  }

  onLoadError(message) {
    this.player.setPlaying(false);
    this.player.seek = 0;
    showMessage(`cannot read the log: ${message}`);
  }

  /**
   * Each robot's body radius, from its kind; a flyer (a logged `z` column, pointmass3d) is drawn
   * larger the higher it flies: ALTITUDE_GROWTH more per metre, up to 3 m.
   */
  robotSizes(frame) {
    let s = this.sizes.get(frame.robots);
    if (!s) {
      const radius = this.header.kinds.map((k) => k.radius > 0 ? k.radius : 0.05);
      const r = frame.robots;
      s = new Float32Array(r.count);
      for (let i = 0; i < r.count; i++) {
        const body = (r.kind && radius[r.kind[i]]) ?? 0.05;
        const z = r.z ? Math.min(Math.max(r.z[i], 0), 3) : 0;
        s[i] = body * (1 + ALTITUDE_GROWTH * z);
      }
      this.sizes.set(frame.robots, s);
    }
    return s;
  }

  /**
   * Box-shaped robots (a kind with `shape` "box"): per robot, its half length and half width
   * as fractions of its drawn radius (the box's half-diagonal), (0, 0) for a round one; null
   * when the log has no box-shaped kind. The renderers turn a box by its heading.
   */
  robotBoxes(frame) {
    const kinds = this.header.kinds;
    if (!kinds.some((k) => k.shape === 'box' && k.halfLength > 0 && k.halfWidth > 0)) return null;
    let b = this.boxes.get(frame.robots);
    if (!b) {
      const r = frame.robots;
      b = new Float32Array(2 * r.count);
      for (let i = 0; r.kind && i < r.count; i++) {
        const k = kinds[r.kind[i]];
        if (!k || k.shape !== 'box' || !(k.radius > 0)) continue;
        b[2 * i] = k.halfLength / k.radius;
        b[2 * i + 1] = k.halfWidth / k.radius;
      }
      this.boxes.set(frame.robots, b);
    }
    return b;
  }

  /**
   * The lit LEDs of robots whose kind has more than one, as dots (an entity set the renderers
   * draw like robots): LEDs 0 .. L-2 on a ring, LED 0 straight ahead and the others
   * counter-clockwise, evenly spaced; LED L-1, the beacon, at the centre.
   */
  ledDots(frame) {
    let d = this.ledDotCache.get(frame.robots);
    if (d) return d;
    const r = frame.robots, kinds = this.header.kinds;
    const led = r.leds, width = r.widths.leds || 0, kind = r.kind;
    const xs = [], ys = [], sizes = [], colors = [];
    for (let i = 0; led && kind && i < r.count; i++) {
      const k = kinds[kind[i]];
      const count = Math.min(k?.ledCount ?? 0, width);
      if (count < 2) continue;
      const radius = k.radius > 0 ? k.radius : 0.05;
      const ring = count - 1;
      for (let j = 0; j < count; j++) {
        const c = led[i * width + j];
        if (!(c >>> 24)) continue; // off (alpha 0)
        if (j === ring) {
          xs.push(r.x[i]);
          ys.push(r.y[i]);
          sizes.push(BEACON * radius);
        } else {
          const a = r.theta[i] + 2 * Math.PI * j / ring;
          xs.push(r.x[i] + RING * radius * Math.cos(a));
          ys.push(r.y[i] + RING * radius * Math.sin(a));
          sizes.push(RING_DOT * radius);
        }
        colors.push(c);
      }
    }
    const n = xs.length;
    d = {
      entities: { count: n, x: Float32Array.from(xs), y: Float32Array.from(ys), theta: null },
      size: Float32Array.from(sizes), rgba: Uint32Array.from(colors),
      tex: new Float32Array(n).fill(-1),
    };
    this.ledDotCache.set(frame.robots, d);
    return d;
  }

  /** Radius of the smallest body that has LED dots, metres (Infinity when none has). */
  smallestLedBody() {
    if (this.ledBody === undefined) {
      const radii = this.header.kinds.filter((k) => k.ledCount > 1)
        .map((k) => (k.radius > 0 ? k.radius : 0.05));
      this.ledBody = radii.length ? Math.min(...radii) : Infinity;
    }
    return this.ledBody;
  }

  /**
   * Range-and-bearing links: a segment between two robots whose kinds both have a range
   * (rabRange > 0) and which are within the smaller of the two ranges. The robots with a
   * range are counting-sorted into a grid of cells at least as large as the largest range, so
   * each one is compared only with the robots of its own and the 8 neighbouring cells.
   */
  rabLinks(frame) {
    let links = this.rabCache.get(frame.robots);
    if (links) return links;
    const r = frame.robots, n = r.count, kind = r.kind, x = r.x, y = r.y;
    const range = this.header.kinds.map((k) => (k.rabRange > 0 ? k.rabRange : 0));
    let out = new Float32Array(1024), used = 0;
    const members = [];
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; kind && i < n; i++) {
      if (!(range[kind[i]] > 0) || !Number.isFinite(x[i]) || !Number.isFinite(y[i])) continue;
      members.push(i);
      minX = Math.min(minX, x[i]); maxX = Math.max(maxX, x[i]);
      minY = Math.min(minY, y[i]); maxY = Math.max(maxY, y[i]);
    }
    if (members.length > 1) {
      // Cells no smaller than the largest range; larger when the robots are sparse, so that
      // there are at most about two cells per robot.
      let cell = Math.max(...range);
      while ((Math.floor((maxX - minX) / cell) + 1) * (Math.floor((maxY - minY) / cell) + 1) >
             2 * members.length + 16) cell *= 2;
      const gw = Math.floor((maxX - minX) / cell) + 1, gh = Math.floor((maxY - minY) / cell) + 1;
      const cx = new Int32Array(n), cy = new Int32Array(n);
      const start = new Int32Array(gw * gh + 1);
      for (const i of members) {
        cx[i] = Math.min(gw - 1, Math.floor((x[i] - minX) / cell));
        cy[i] = Math.min(gh - 1, Math.floor((y[i] - minY) / cell));
        start[cy[i] * gw + cx[i] + 1]++;
      }
      for (let c = 0; c < gw * gh; c++) start[c + 1] += start[c];
      const fill = start.slice(0, gw * gh), order = new Int32Array(members.length);
      for (const i of members) order[fill[cy[i] * gw + cx[i]]++] = i;
      for (const i of members) {
        const ri = range[kind[i]];
        for (let gy = Math.max(0, cy[i] - 1); gy <= Math.min(gh - 1, cy[i] + 1); gy++) {
          for (let gx = Math.max(0, cx[i] - 1); gx <= Math.min(gw - 1, cx[i] + 1); gx++) {
            const c = gy * gw + gx;
            for (let k = start[c]; k < start[c + 1]; k++) {
              const j = order[k];
              if (j <= i) continue;
              const reach = Math.min(ri, range[kind[j]]);
              const ex = x[j] - x[i], ey = y[j] - y[i];
              if (ex * ex + ey * ey > reach * reach) continue;
              if (used + 4 > out.length) {
                const bigger = new Float32Array(out.length * 2);
                bigger.set(out);
                out = bigger;
              }
              out[used++] = x[i]; out[used++] = y[i]; out[used++] = x[j]; out[used++] = y[j];
            }
          }
        }
      }
    }
    links = { segments: out.subarray(0, used), count: used / 4 };
    this.rabCache.set(frame.robots, links);
    return links;
  }

  objectSizes(frame) {
    let s = this.sizes.get(frame.objects);
    if (!s) {
      const o = frame.objects;
      s = new Float32Array(o.count);
      for (let i = 0; i < o.count; i++) s[i] = o.size[i] > 0 ? o.size[i] / 2 : 0.05;
      this.sizes.set(frame.objects, s);
    }
    return s;
  }

  overlay(key, view) {
    let c = this.overlays.get(key);
    if (!c) {
      c = document.createElement('canvas');
      this.overlays.set(key, c);
    }
    if (c.width !== view.width || c.height !== view.height) {
      c.width = view.width;
      c.height = view.height;
    }
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, c.width, c.height);
    return { canvas: c, g };
  }

  toScreen(view, x, y) {
    return [view.width / 2 + (x - view.cx) * view.scale, view.height / 2 - (y - view.cy) * view.scale];
  }

  labels(view, layer, frame, e, sizes) {
    const { canvas, g } = this.overlay(layer, view);
    const names = this.header[layer.type].names;
    const idIndex = this.idIndex(layer.type);
    g.font = `${Math.round(12 * (view.dpr || 1))}px ui-monospace, monospace`;
    g.fillStyle = cssColor(layer.labelColor);
    g.textBaseline = 'middle';
    let drawn = 0;
    for (let i = 0; i < e.count && drawn < MAX_LABELS; i++) {
      const [sx, sy] = this.toScreen(view, e.x[i], e.y[i]);
      if (sx < -50 || sy < -20 || sx > view.width + 50 || sy > view.height + 20) continue;
      let text;
      if (layer.label === 'tag') text = frame.tags[e.tag[i]] ?? '';
      else if (layer.label === 'number') text = String(e.id[i]);
      else {
        const k = idIndex.get(e.id[i]);
        text = (k !== undefined && names[k]) || String(e.id[i]);
      }
      if (text) g.fillText(text, sx + sizes[i] * view.scale + 3, sy);
      drawn++;
    }
    return { type: 'screen', canvas };
  }

  /** Row of robot `id` in frame `f` (-1 when absent); `hint`, a row to try first. */
  rowOf(f, id, hint = -1) {
    const ids = f.robots.id;
    if (hint >= 0 && hint < f.robots.count && ids[hint] === id) return hint;
    for (let i = 0; i < f.robots.count; i++) if (ids[i] === id) return i;
    return -1;
  }

  /**
   * The selected robot's rays in frame `f`: for each ray sensor of its kind, one segment a ray
   * from the body's bounding circle to the sensor's range, split into those reading 0 and those
   * reading more (`idle`, `hit`). The readings: the frame's column when the log carries it,
   * else (live) the run's, asked for the selected robot (`selected.now`). Null when none.
   */
  rays(f, selected) {
    const c = this.rayCache;
    if (c && c.frame === f && c.selected === selected && c.now === selected.now) return c.rays;
    let rays = null;
    const r = f.robots, row = this.rowOf(f, selected.id, selected.index ?? -1);
    const kind = row >= 0 && r.kind ? this.header.kinds[r.kind[row]] : null;
    if (kind && kind.rays && kind.rays.length) {
      const idle = [], hit = [];
      const x = r.x[row], y = r.y[row], theta = r.theta[row];
      const r0 = kind.radius > 0 ? kind.radius : 0.05;
      for (const set of kind.rays) {
        const w = r.widths[set.column];
        let values = w ? r.columns[set.column].subarray(row * w, (row + 1) * w) : null;
        if (!values && selected.now && selected.now.columns) {
          const v = selected.now.columns[set.column];
          values = Array.isArray(v) ? v : typeof v === 'number' ? [v] : null;
        }
        set.angles.forEach((a, k) => {
          const ca = Math.cos(theta + a), sa = Math.sin(theta + a), r1 = r0 + set.range;
          const seg = [x + r0 * ca, y + r0 * sa, x + r1 * ca, y + r1 * sa];
          (values && values[k] > 0 ? hit : idle).push(...seg);
        });
      }
      rays = { idle: Float32Array.from(idle), hit: Float32Array.from(hit) };
    }
    this.rayCache = { frame: f, selected, now: selected.now, rays };
    return rays;
  }

  /**
   * Robot `id`'s trail up to frame `f`: segments between its positions in the frames the page
   * holds over the last TRAIL_SECONDS (simulated), newest first; kept until the frame changes.
   */
  trail(f, id) {
    const c = this.trailCache;
    if (c && c.frame === f && c.id === id) return c;
    const xs = [], ys = [];
    let row = -1;
    for (let i = f.index; i >= 0 && this.store.has(i); i--) {
      const g = this.store.frames.get(i);
      if (f.timeNs - g.timeNs > TRAIL_SECONDS * 1e9 || g.timeNs > f.timeNs) break;
      row = this.rowOf(g, id, row);
      if (row < 0) break;
      xs.push(g.robots.x[row]);
      ys.push(g.robots.y[row]);
    }
    const segments = new Float32Array(Math.max(0, xs.length - 1) * 4);
    for (let k = 0; k + 1 < xs.length; k++) segments.set([xs[k], ys[k], xs[k + 1], ys[k + 1]], 4 * k);
    this.trailCache = { frame: f, id, segments, count: xs.length - 1 > 0 ? xs.length - 1 : 0, points: xs.length };
    return this.trailCache;
  }

  /** Entity id -> position in the header's table, for 'robots' or 'objects'. */
  idIndex(set) {
    this.idIndexes = this.idIndexes || {};
    if (!this.idIndexes[set]) {
      const m = new Map();
      this.header[set].ids.forEach((id, k) => m.set(id, k));
      this.idIndexes[set] = m;
    }
    return this.idIndexes[set];
  }

  /** The draw list for the current frame, in the configured layer order. */
  drawList(view) {
    const h = this.header;
    const f = this.frame;
    const list = [
      { type: 'clear', color: OUTSIDE },
      { type: 'rect', rect: [-h.arena.width / 2, -h.arena.height / 2, h.arena.width, h.arena.height], color: FLOOR },
    ];
    for (const l of this.config.layers) {
      if (l.transparent) continue;
      const img = l.coloring.texture ? this.images.get(l.coloring.texture) : null;
      switch (l.type) {
        case 'background':
          list.push({ type: 'screen', color: l.coloring.color, image: img });
          break;
        case 'map':
          list.push({ type: 'map', color: l.coloring.color, image: img });
          break;
        case 'field': {
          // A picture stretched over the arena (an environment layer's map), pixels unsmoothed.
          const { canvas, g } = this.overlay(l, view);
          const [x0, y0] = this.toScreen(view, -h.arena.width / 2, h.arena.height / 2);
          const [x1, y1] = this.toScreen(view, h.arena.width / 2, -h.arena.height / 2);
          if (img && img.complete) {
            g.imageSmoothingEnabled = false;
            g.drawImage(img, x0, y0, x1 - x0, y1 - y0);
          } else {
            g.fillStyle = cssColor(l.coloring.color);
            g.fillRect(x0, y0, x1 - x0, y1 - y0);
          }
          list.push({ type: 'screen', canvas });
          break;
        }
        case 'robots':
        case 'objects': {
          if (!f) break;
          if (l.type === 'robots' && this.trailOn && this.selected) {
            const t = this.trail(f, this.selected.id);
            list.push({ type: 'lines', key: 'trail', segments: t.segments, count: t.count,
              color: TRAIL_COLOR, widthPx: TRAIL_PIXELS * (view.dpr || 1) });
          }
          // The selected robot's rays, under the robots (so a large swarm keeps its fast path).
          const rays = l.type === 'robots' && this.selected ? this.rays(f, this.selected) : null;
          if (rays) {
            for (const [key, segments, color] of [['rays-idle', rays.idle, RAY_IDLE], ['rays-hit', rays.hit, RAY_HIT]]) {
              list.push({ type: 'lines', key, segments, count: segments.length / 4, color,
                widthPx: RAY_PIXELS * (view.dpr || 1) });
            }
          }
          const robots = l.type === 'robots';
          const e = robots ? f.robots : f.objects;
          const sizes = robots ? this.robotSizes(f) : this.objectSizes(f);
          const coloring = this.colorings.get(l);
          const { rgba, tex } = coloring.compute(f, e);
          list.push({ type: 'entities', key: l, entities: e, size: sizes, rgba, tex,
            textured: coloring.textured, box: robots ? this.robotBoxes(f) : null,
            circle: robots || l.circles, heading: robots && l.rotation, rotation: robots && l.rotation });
          const ledBody = this.smallestLedBody();
          if (robots && l.leds && ledBody < Infinity && ledBody * view.scale >= LED_MIN_PIXELS) {
            const dots = this.ledDots(f);
            if (!this.ledKeys.has(l)) this.ledKeys.set(l, {});
            list.push({ type: 'entities', key: this.ledKeys.get(l), ...dots, textured: false,
              circle: true, heading: false, rotation: false });
          }
          if (l.label !== 'none') list.push(this.labels(view, l, f, e, sizes));
          break;
        }
        case 'range_and_bearing': {
          if (!f) break;
          const { segments, count } = this.rabLinks(f);
          list.push({ type: 'lines', key: l, segments, count, color: l.coloring.color,
            widthPx: RAB_LINE_PIXELS * (view.dpr || 1) });
          break;
        }
        case 'custom': {
          const layer = this.customs.get(l);
          if (!layer || !f) break;
          const { canvas, g } = this.overlay(l, view);
          try {
            layer.render(g, f, { ...view, toScreen: (x, y) => this.toScreen(view, x, y) });
          } catch (e) {
            if (!this.customFailed) showMessage(`custom layer (line ${l.line}): ${e.message}`, 'note');
            this.customFailed = true;
          }
          list.push({ type: 'screen', canvas });
          break;
        }
      }
    }
    return list;
  }

  view() {
    const { width, height, dpr } = this.size();
    return { width, height, dpr, scale: this.camera.scale, cx: this.camera.cx, cy: this.camera.cy };
  }

  /** Draws the frame; `force`: everything anew (to read pixels back). */
  render(force = false) {
    const view = this.view();
    this.renderer.draw(view, this.drawList(view), force);
    this.lastView = view;
  }

  /** One animation frame: advance playback, fetch ahead, draw if anything changed. */
  tick(now) {
    const dt = this.last ? (now - this.last) / 1000 : 0;
    this.last = now;
    const p = this.player;
    if (this.live && this.live.follow) {
      // Live, following the run: the newest frame computed, once it has arrived; until then
      // the newest one that has (not the one shown before it: at a large swarm the run
      // computes the next frame before the page has received one). Requests for frames older
      // than that one are dropped.
      const newest = Math.max(0, p.frameCount - 1);
      if (p.frameCount) this.store.get(newest); // (starts loading it)
      const shown = this.frame ? this.frame.index : -1;
      let i = newest;
      while (i > shown && newest - i < FOLLOW_SEARCH && !this.store.has(i)) i--;
      p.position = this.store.has(i) ? i : newest;
      if (p.frameCount) this.store.dropQueuedBefore(p.position);
    } else if (this.bench) {
      const next = (p.frame + 1) % Math.max(1, p.frameCount);
      if (this.store.has(next)) { p.position = next; this.bench.shown++; }
    } else {
      p.advance(dt, (i) => this.store.has(i));
    }
    const want = p.frame;
    const f = p.frameCount ? this.store.get(want) : null;
    if (f && f !== this.frame) {
      if (this.bench && this.live && this.live.follow) this.bench.shown++;
      this.frame = f;
      this.dirty = true;
    }
    if (p.frameCount) this.store.prefetch(want, p.rate() < 0 ? -1 : 1);
    if (this.following && this.selected && this.frame) {
      // f: the camera keeps the selected robot at the centre of the window.
      const row = this.rowOf(this.frame, this.selected.id, this.followRow ?? -1);
      this.followRow = row;
      if (row >= 0 && (this.camera.cx !== this.frame.robots.x[row] || this.camera.cy !== this.frame.robots.y[row])) {
        this.camera.cx = this.frame.robots.x[row];
        this.camera.cy = this.frame.robots.y[row];
        this.dirty = true;
      }
    }
    if (this.bench && this.bench.pan) {
      // As while the user drags the view: a move of a few pixels at every animation frame.
      this.camera.cx += 4 * Math.cos(now / 500) / this.camera.scale;
      this.dirty = true;
    }
    if (this.dirty || this.bench) {
      this.render();
      this.dirty = false;
      this.fpsSamples.push(now);
    }
    while (this.fpsSamples.length && now - this.fpsSamples[0] > 1000) this.fpsSamples.shift();
    this.updateUi();
    if (this.bench) {
      this.bench.rendered++;
      if (this.bench.lastNow !== undefined) this.bench.intervals.push(now - this.bench.lastNow);
      this.bench.lastNow = now;
    }
    if (!this.readyResolved && (this.frame || p.frameCount === 0)) {
      this.readyResolved = true;
      this.resolveReady();
    }
    requestAnimationFrame((t) => this.tick(t));
  }

  updateUi() {
    const p = this.player;
    const f = this.frame;
    ui.status.textContent = f ? f.status : '';
    let state = p.mode;
    if (p.buffering && p.rate() !== 0) state += ' (loading)';
    if (this.live && this.live.follow) state = 'live';
    ui.state.textContent = state;
    ui.play.textContent = p.playing ? 'pause' : 'play';
    if (document.activeElement !== ui.timeline) ui.timeline.value = String(p.frame);
    ui.clock.textContent = f
      ? `tick ${f.tick} · t = ${(f.timeNs / 1e9).toFixed(3)} s · frame ${f.index + 1}/${p.frameCount}`
      : `frame – / ${p.frameCount}`;
    ui.speed.textContent = `${+p.speed.toPrecision(4)} ticks/s`;
    ui.fps.textContent = `${this.fpsSamples.length} fps`;
    document.body.dataset.mode = p.mode;
  }

  /** The robot under device pixel (x, y), or -1. */
  pick(x, y) {
    const f = this.frame;
    if (!f) return -1;
    const v = this.view();
    const wx = v.cx + (x - v.width / 2) / v.scale, wy = v.cy - (y - v.height / 2) / v.scale;
    const sizes = this.robotSizes(f);
    const r = f.robots;
    let best = -1, bestD = Infinity;
    const slack = 6 * (v.dpr || 1) / v.scale;
    for (let i = 0; i < r.count; i++) {
      const dx = r.x[i] - wx, dy = r.y[i] - wy;
      const d = dx * dx + dy * dy;
      const lim = Math.max(sizes[i], slack);
      if (d < lim * lim && d < bestD) { best = i; bestD = d; }
    }
    return best;
  }

  async select(i) {
    const f = this.frame;
    if (i < 0 || !f) {
      ui.info.hidden = true;
      ui.robotControls.hidden = true;
      this.selected = null;
      return;
    }
    const r = f.robots;
    const c = this.header.arena.center;
    const k = this.idIndex('robots').get(r.id[i]);
    const name = (k !== undefined && this.header.robots.names[k]) || '';
    const kind = (r.kind && this.header.kinds[r.kind[i]]?.name) ?? '';
    const show = (d) => {
      // Every other logged column, one line each (the exact values, once the server sent them).
      const more = Object.entries(d.columns || {}).map(([column, v]) => {
        const text = JSON.stringify(v);
        return `\n${column.padEnd(6)} ${text.length > 60 ? text.slice(0, 57) + '...' : text}`;
      }).join('');
      ui.info.textContent =
        `robot  ${d.name ? d.name + ' ' : ''}(id ${d.id})\nkind   ${d.kind}\ntag    ${d.tag || '(none)'}\n` +
        `x      ${d.x.toFixed(4)} m\ny      ${d.y.toFixed(4)} m\n` +
        `θ      ${d.theta.toFixed(4)} rad (${(d.theta * 180 / Math.PI).toFixed(1)}°)\ntick   ${d.tick}` +
        more + (d.globals || '');
      ui.info.hidden = false;
      ui.robotControls.hidden = !(this.live && this.live.canControl);
      this.selected = d;
    };
    show({ id: r.id[i], name, kind, tag: f.tags[r.tag[i]], x: r.x[i] + c[0], y: r.y[i] + c[1],
      theta: r.theta[i], tick: f.tick, index: i });
    try {
      const exact = await fetchJson(`/api/robot?frame=${f.index}&index=${i}`);
      if (this.frame === f) {
        show({ id: exact.id, name: exact.name, kind: exact.kind, tag: exact.tag, x: exact.x,
          y: exact.y, theta: exact.theta, tick: exact.tick, index: i, columns: exact.columns });
      }
      // Live: what the run holds of it now and the log does not carry (its sensors' readings,
      // its commands ...), and the globals of its Lua script (numbers, strings, booleans).
      if (this.live && this.frame === f) {
        const now = await fetchJson(`/api/robot-now?robot=${exact.id}`);
        const logged = new Set(['x', 'y', 'theta', 'id', 'kind', ...Object.keys(exact.columns || {})]);
        const clip = (t) => (t.length > 60 ? t.slice(0, 57) + '...' : t);
        let lines = `\n— the run now (tick ${now.tick}) —`;
        for (const [k, val] of Object.entries(now.columns || {})) {
          if (!logged.has(k)) lines += `\n${k.padEnd(6)} ${clip(JSON.stringify(val))}`;
        }
        lines += now.globals
          ? Object.entries(now.globals).map(([k, val]) => `\nglobal ${k} = ${clip(JSON.stringify(val))}`).join('') ||
            '\n(its script has no number, string or boolean global)'
          : `\n(no script globals: ${now.why || now.error})`;
        if (this.selected && this.selected.id === exact.id) {
          show({ ...this.selected, globals: lines, now });
          this.dirty = true;
          this.watchNow(exact.id);
        }
      }
    } catch { /* keep the page's values */ }
  }
}

/**
 * Live: while robot `id` stays selected, asks the run for it every RAY_REFRESH_MS (its rays'
 * readings, which the log does not carry, follow the run).
 */
Viewer.prototype.watchNow = function watchNow(id) {
  clearTimeout(this.nowTimer);
  this.nowTimer = setTimeout(async () => {
    if (!this.selected || this.selected.id !== id || !this.live || this.live.stopped) return;
    try {
      const now = await fetchJson(`/api/robot-now?robot=${id}`);
      if (this.selected && this.selected.id === id && now.columns) {
        this.selected = { ...this.selected, now };
        this.dirty = true;
      }
    } catch { /* the run has ended: keep the last readings */ }
    this.watchNow(id);
  }, RAY_REFRESH_MS);
};

function bindInput(v) {
  const p = v.player;
  const held = new Set();
  window.addEventListener('keydown', (ev) => {
    if (ev.target === ui.timeline && (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight')) ev.target.blur();
    if (ev.target === ui.runSpeed || ev.target instanceof HTMLInputElement) return;
    // Live: looking back stops following the run's newest frame ("latest" follows again).
    if (v.live && (ev.key === 'ArrowLeft' || ev.key === 'Enter')) v.live.follow = false;
    switch (ev.key) {
      case ' ': p.togglePlay(); break;
      case 'ArrowRight': if (!held.has(ev.key)) p.startSeek(+1); break;
      case 'ArrowLeft': if (!held.has(ev.key)) p.startSeek(-1); break;
      case 'ArrowUp': p.faster(); break;
      case 'ArrowDown': p.slower(); break;
      case 'Enter': p.restart(); break;
      case 'Escape': if (!v.placing) return; v.setPlacing(false); break;
      // The clicked robot: follow it with the camera / draw its trail (again: stop).
      case 'f': v.following = !v.following && !!v.selected; v.dirty = true; break;
      case 't': v.trailOn = !v.trailOn && !!v.selected; v.dirty = true; break;
      // Live, with the token: the selected robot's LEDs take the next colour; Delete removes it.
      case 'c':
      case 'Delete':
        if (!v.live || !v.selected || !v.live.status?.control) return;
        if (ev.key === 'Delete') v.live.remove(v.selected.id);
        else v.live.cycleLeds(v.selected.id);
        break;
      default: return;
    }
    held.add(ev.key);
    ev.preventDefault();
  });
  window.addEventListener('keyup', (ev) => {
    held.delete(ev.key);
    if ((ev.key === 'ArrowRight' && p.seek > 0) || (ev.key === 'ArrowLeft' && p.seek < 0)) p.stopSeek();
  });
  window.addEventListener('blur', () => { held.clear(); if (p.seek) p.stopSeek(); });
  ui.play.addEventListener('click', () => { p.togglePlay(); ui.play.blur(); });
  ui.timeline.addEventListener('input', () => {
    if (v.live) v.live.follow = false;
    p.goTo(Number(ui.timeline.value));
  });
  ui.timeline.addEventListener('change', () => ui.timeline.blur());

  const dpr = () => window.devicePixelRatio || 1;
  ui.canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const view = v.view();
    const rect = ui.canvas.getBoundingClientRect();
    const x = (ev.clientX - rect.left) * dpr(), y = (ev.clientY - rect.top) * dpr();
    const wx = view.cx + (x - view.width / 2) / view.scale;
    const wy = view.cy - (y - view.height / 2) / view.scale;
    const k = Math.pow(1.0015, -ev.deltaY);
    v.camera.scale = Math.min(1e7, Math.max(1e-4, v.camera.scale * k));
    v.camera.cx = wx - (x - view.width / 2) / v.camera.scale;
    v.camera.cy = wy + (y - view.height / 2) / v.camera.scale;
    v.dirty = true;
  }, { passive: false });
  let drag = null;
  const canvasPoint = (ev) => {
    const rect = ui.canvas.getBoundingClientRect();
    return [(ev.clientX - rect.left) * dpr(), (ev.clientY - rect.top) * dpr()];
  };
  ui.canvas.addEventListener('pointerdown', (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, cx: v.camera.cx, cy: v.camera.cy, moved: false };
    // Live, with the token: shift-drag moves a robot (an intervention, recorded by the run).
    if (ev.shiftKey && v.live && v.live.canControl && v.frame) {
      const i = v.pick(...canvasPoint(ev));
      if (i >= 0) drag.robotId = v.frame.robots.id[i];
    }
    ui.canvas.setPointerCapture(ev.pointerId);
  });
  ui.canvas.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; ui.canvas.classList.add('dragging'); }
    if (!drag.moved || drag.robotId !== undefined) return;
    v.camera.cx = drag.cx - dx * dpr() / v.camera.scale;
    v.camera.cy = drag.cy + dy * dpr() / v.camera.scale;
    v.dirty = true;
  });
  ui.canvas.addEventListener('pointerup', (ev) => {
    ui.canvas.classList.remove('dragging');
    if (drag && drag.moved && drag.robotId !== undefined) {
      const [x, y] = canvasPoint(ev);
      const view = v.view(), c = v.header.arena.center;
      const wx = view.cx + (x - view.width / 2) / view.scale + c[0];
      const wy = view.cy - (y - view.height / 2) / view.scale + c[1];
      v.live.move(drag.robotId, wx, wy);
    } else if (drag && !drag.moved && v.placing) {
      // Live, with the token: "add ... place" armed; the robot goes where the user clicked.
      const [x, y] = canvasPoint(ev);
      const view = v.view(), c = v.header.arena.center;
      v.live.add(ui.addKind.value, ui.addController.value,
        view.cx + (x - view.width / 2) / view.scale + c[0],
        view.cy - (y - view.height / 2) / view.scale + c[1]);
      v.setPlacing(false);
    } else if (drag && !drag.moved) {
      const rect = ui.canvas.getBoundingClientRect();
      v.select(v.pick((ev.clientX - rect.left) * dpr(), (ev.clientY - rect.top) * dpr()));
    }
    drag = null;
  });
  ui.canvas.addEventListener('dblclick', () => v.fit());
  new ResizeObserver(() => { v.dirty = true; }).observe(ui.canvas);
}

/** The hook tests and benchmarks drive (tests/e2e). Coordinates are CSS pixels of the canvas. */
function exposeApi(v) {
  const dpr = () => window.devicePixelRatio || 1;
  window.fleetsimViewer = {
    ready: v.ready,
    header: v.header,
    config: v.config,
    renderer: () => ({ name: v.renderer.name, device: v.renderer.device, mode: v.renderer.lastMode }),
    state() {
      const f = v.frame;
      return {
        frame: v.player.frame, frameCount: v.player.frameCount, tick: f ? f.tick : null,
        timeNs: f ? f.timeNs : null, shownFrame: f ? f.index : null, playing: v.player.playing,
        live: v.live ? { ...v.live.status, follow: v.live.follow } : null,
        mode: v.player.mode, speed: v.player.speed, status: f ? f.status : null,
        fps: v.fpsSamples.length, error: document.body.dataset.error || null,
        selected: v.selected, following: v.following, placing: !!v.placing,
        rays: v.selected && v.rayCache && v.rayCache.rays
          ? { idle: v.rayCache.rays.idle.length / 4, hit: v.rayCache.rays.hit.length / 4 } : null,
        trail: v.trailOn && v.trailCache ? { points: v.trailCache.points } : null,
      };
    },
    pause() { v.player.setPlaying(false); },
    play() { v.player.setPlaying(true); },
    /** Shows frame i and resolves when it is drawn. */
    async show(i) {
      if (v.live) v.live.follow = false; // (as the timeline does)
      v.player.setPlaying(false);
      v.player.goTo(i);
      while (!v.frame || v.frame.index !== v.player.frame) {
        if (document.body.dataset.error) throw new Error(document.body.dataset.error);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** CSS pixel position on the canvas of world point (x, y) in metres (absolute). */
    worldToCanvas(x, y) {
      const c = v.header.arena.center;
      const [sx, sy] = v.toScreen(v.view(), x - c[0], y - c[1]);
      return [sx / dpr(), sy / dpr()];
    },
    /**
     * Robot i of the frame shown, absolute world coordinates, and each of its columns as the
     * page decoded them (`columns`: name -> array of `width` values).
     */
    robot(i) {
      const f = v.frame, c = v.header.arena.center;
      if (!f || i >= f.robots.count) return null;
      const r = f.robots;
      const columns = {};
      for (const [name, a] of Object.entries(r.columns)) {
        const w = r.widths[name];
        columns[name] = Array.from(a.subarray(i * w, (i + 1) * w));
      }
      return { x: r.x[i] + c[0], y: r.y[i] + c[1], theta: r.theta[i], tag: f.tags[r.tag[i]],
        id: r.id[i], kind: v.header.kinds[r.kind[i]]?.name, columns };
    },
    /** The canvas as a PNG data URL, drawn now (tests/e2e/render_vs_page.test.mjs). */
    canvasPng() {
      v.render(true);
      return (v.renderer.composited ? v.renderer.composited() : ui.canvas).toDataURL('image/png');
    },
    /** RGBA of the canvas at CSS pixel (x, y), drawn now. */
    pixel(x, y) {
      v.render(true);
      return v.renderer.readPixel(x * dpr(), y * dpr());
    },
    /** Loads every frame (small logs / benchmarks only). */
    async preload() {
      for (let i = 0; i < v.player.frameCount; i += v.store.chunkFrames) v.store.get(i);
      for (;;) {
        let all = true;
        for (let i = 0; i < v.player.frameCount; i++) if (!v.store.has(i)) { all = false; break; }
        if (all) return;
        if (document.body.dataset.error) throw new Error(document.body.dataset.error);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /** Draws a new frame at every animation frame for `seconds`; returns the rates. */
    async benchmark(seconds, { pan = false } = {}) {
      // Replay: a new frame at every animation frame. Live, following the run: the newest
      // frame, redrawn at every animation frame (as while the user pans or zooms).
      if (!v.live) v.player.setPlaying(false);
      v.bench = { shown: 0, rendered: 0, intervals: [], pan };
      await new Promise((r) => setTimeout(r, 500)); // warm-up
      const b0 = { ...v.bench }, t0 = performance.now();
      v.bench.intervals = [];
      v.store.decodeMs = [];
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const t1 = performance.now();
      const quantile = (a, q) => {
        if (!a.length) return null;
        const s = [...a].sort((x, y) => x - y);
        return s[Math.min(s.length - 1, Math.floor(q * s.length))];
      };
      const out = { seconds: (t1 - t0) / 1000, fps: (v.bench.rendered - b0.rendered) * 1000 / (t1 - t0),
        newFramesPerSecond: (v.bench.shown - b0.shown) * 1000 / (t1 - t0),
        frameMsMedian: quantile(v.bench.intervals, 0.5), frameMsP90: quantile(v.bench.intervals, 0.9),
        decodeMsMedian: quantile(v.store.decodeMs, 0.5), decoder: v.store.decoder,
        robots: v.frame ? v.frame.robots.count : 0, renderer: v.renderer.name, device: v.renderer.device,
        mode: v.renderer.lastMode || 'canvas2d' };
      v.bench = null;
      return out;
    },
  };
}

async function main() {
  let header, config;
  try {
    [header, config] = await Promise.all([fetchJson('/api/header'), fetchJson('/api/config')]);
  } catch (e) {
    showMessage(`cannot load the log: ${e.message}`);
    ui.state.textContent = 'error';
    return;
  }
  document.title = `fleetsim view · ${header.log}`;
  const renderer = makeRenderer(ui.canvas);
  const v = new Viewer(header, config, renderer);
  v.ready = new Promise((resolve) => { v.resolveReady = resolve; });
  await v.init();
  bindInput(v);
  exposeApi(v);
  requestAnimationFrame((t) => v.tick(t));
  if (header.live) watchRun(v); else watchServer();
}

// A live run (`fleetsim run --view`): the frame count follows the run's; the run's own
// controls are shown, and enabled when the page's URL carries the run's token.
function watchRun(v) {
  ui.live.hidden = false;
  document.getElementById('help-live').hidden = false;
  document.body.dataset.run = 'running';
  for (const s of speedOptions()) {
    const o = document.createElement('option');
    o.value = s;
    o.textContent = s === 'max' ? 'as fast as possible' : s === '1' ? 'real time' : `×${s}`;
    ui.runSpeed.append(o);
  }
  let lastIntervention = '';
  const link = new LiveLink({
    onStatus(st) {
      v.store.setCount(st.frames, st.firstFrame);
      v.player.frameCount = st.frames;
      ui.timeline.min = String(st.firstFrame);
      ui.timeline.max = String(Math.max(0, st.frames - 1));
      ui.title.textContent = `${v.header.experiment} · live run · ${st.frames} frames` +
        (st.firstFrame > 0 ? ` (from frame ${st.firstFrame})` : '');
      const speed = st.speed > 0 ? `${+st.speed.toPrecision(4)}× real time` : 'as fast as possible';
      ui.runState.textContent = st.state === 'ended' ? 'run: ended'
        : `run: ${st.state} · tick ${st.tick} · ${speed}`;
      ui.runPause.textContent = st.state === 'paused' ? 'resume run' : 'pause run';
      const wanted = st.speed > 0 ? String(st.speed) : 'max';
      if (document.activeElement !== ui.runSpeed && [...ui.runSpeed.options].some((o) => o.value === wanted)) {
        ui.runSpeed.value = wanted;
      }
      const off = !st.control || st.state === 'ended';
      const noAdd = off || !ui.addKind.options.length || !ui.addController.options.length;
      for (const b of [ui.addKind, ui.addController, ui.addPlace]) b.disabled = noAdd;
      if (noAdd && v.placing) v.setPlacing(false);
      for (const b of [ui.runPause, ui.runStep, ui.runReset, ui.runSpeed]) {
        b.disabled = off;
        b.title = st.control ? b.title : 'control needs the run\'s token (open the URL that ' +
          '`fleetsim run --view` printed)';
      }
      document.body.dataset.run = st.state;
      if (st.intervention && st.intervention !== lastIntervention) {
        showMessage(st.intervention, 'note');
        lastIntervention = st.intervention;
      }
      v.dirty = true;
    },
    onEnd(st) {
      showMessage(`the run has ended (${st.endMessage || 'finished'}); its server has stopped. ` +
        'Frames already loaded still show.', 'note');
      ui.runState.textContent = 'run: ended';
      document.body.dataset.run = 'ended';
    },
    onLost(reason) {
      document.body.dataset.run = 'lost';
      ui.runState.textContent = 'run: gone';
      showMessage(reason ? `the live view refused this page: ${reason}`
        : 'lost contact with the run (it has ended or was stopped); frames already loaded still show',
      'note');
    },
  });
  v.live = link;
  const send = async (command, value, fields) => {
    const refused = await link.control(command, value, fields);
    if (refused) showMessage(`the run refused "${command}": ${refused}`, 'note');
  };
  link.move = (robot, x, y) => send('move', undefined, { robot, x, y });
  link.add = (kind, controller, x, y) => send('add', undefined, { kind, controller, x, y, heading: 0 });
  // Adding a robot: pick its kind and controller, press "place…", click a spot.
  const addable = v.header.addable || { kinds: [], controllers: [] };
  for (const [select, names] of [[ui.addKind, addable.kinds], [ui.addController, addable.controllers]]) {
    for (const name of names) {
      const o = document.createElement('option');
      o.value = o.textContent = name;
      select.append(o);
    }
  }
  v.setPlacing = (on) => {
    v.placing = on && link.canControl;
    if (v.placing) document.body.dataset.placing = '1';
    else delete document.body.dataset.placing;
    ui.addPlace.textContent = v.placing ? 'click a spot (Esc: cancel)' : 'place…';
  };
  ui.addPlace.addEventListener('click', () => { v.setPlacing(!v.placing); ui.addPlace.blur(); });
  link.remove = (robot) => send('remove', undefined, { robot });
  const ledColors = ['red', 'green', 'blue', 'yellow', 'cyan', 'magenta', 'white', 'off'];
  let ledNext = 0;
  link.cycleLeds = (robot) => {
    send('leds', undefined, { robot, color: ledColors[ledNext] });
    ledNext = (ledNext + 1) % ledColors.length;
  };
  // The selected robot's panel: hold an actuator's command, release it, set a global of its
  // Lua script (each recorded by the run, as a move is).
  ui.robotControls.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!v.selected) return;
    const values = ui.commandValues.value.split(/[\s,]+/).filter((w) => w).map(Number);
    send('command', undefined, { robot: v.selected.id, actuator: ui.commandActuator.value.trim(), values });
  });
  ui.commandRelease.addEventListener('click', () => {
    if (v.selected) send('release', undefined, { robot: v.selected.id, actuator: ui.commandActuator.value.trim() });
  });
  ui.paramSet.addEventListener('click', () => {
    if (!v.selected) return;
    // A number, true or false, or a JSON string; any other text is a string.
    const text = ui.paramValue.value.trim();
    let value = text;
    try { const j = JSON.parse(text); if (['number', 'boolean', 'string'].includes(typeof j)) value = j; } catch { /* a string */ }
    send('param', value, { robot: v.selected.id, name: ui.paramName.value.trim() });
  });
  ui.runPause.addEventListener('click', () =>
    send(link.status && link.status.state === 'paused' ? 'play' : 'pause'));
  ui.runStep.addEventListener('click', () => { link.follow = true; send('step'); });
  ui.runReset.addEventListener('click', () => { link.follow = true; send('reset'); });
  ui.runSpeed.addEventListener('change', () => {
    const s = ui.runSpeed.value;
    send('speed', s === 'max' ? 'max' : Number(s));
    ui.runSpeed.blur();
  });
  ui.runFollow.addEventListener('click', () => { link.follow = true; });
  link.run();
}

// Polls the server so that a stopped `fleetsim view` is said in the page, not discovered on
// the next click. Frames already loaded keep playing.
function watchServer() {
  let lost = false;
  setInterval(async () => {
    try {
      const res = await fetch('/api/ping', { cache: 'no-store' });
      if (!res.ok) throw new Error();
      if (lost) { ui.message.hidden = true; delete document.body.dataset.error; lost = false; }
    } catch {
      if (!lost) showMessage('lost contact with the fleetsim view server (was it stopped?); ' +
        'frames already loaded still play');
      lost = true;
    }
  }, 2000);
}

main().catch((e) => {
  showMessage(`viewer failed: ${e.message}`);
  console.error(e);
});
