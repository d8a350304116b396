// Colourings of the component layers (robots, objects): by individual number, by robot kind
// or object class, by tag or by LED colour, with a default (docs/view-format.md). For each
// frame, one RGBA byte per channel and one texture layer (-1 = plain colour) per entity,
// computed in one pass.

/** [r,g,b,a] floats in 0..1 -> packed little-endian RGBA u32 (as the GPU reads bytes). */
export function packColor(c) {
  const b = (v) => Math.max(0, Math.min(255, Math.round(v * 255)));
  return (b(c[0]) | (b(c[1]) << 8) | (b(c[2]) << 16) | (b(c[3]) << 24)) >>> 0;
}

export function cssColor(c) {
  return `rgba(${Math.round(c[0] * 255)},${Math.round(c[1] * 255)},${Math.round(c[2] * 255)},${c[3]})`;
}

/** Computes colours for one component layer. `textureLayer(url)` maps a texture to its index. */
export class LayerColoring {
  /**
   * `types` is the header's `kinds` for a robots layer ({name, ledCount, ...}), its
   * `objectClasses` for an objects layer.
   */
  constructor(layer, types, textureLayer) {
    this.layer = layer;
    this.by = layer.by;
    const resolve = (coloring) => ({
      rgba: packColor(coloring.color),
      tex: coloring.texture ? textureLayer(coloring.texture) : -1,
    });
    this.def = resolve(layer.coloring);
    this.rules = layer.rules.map((r) => ({ ...r, c: resolve(r.coloring) }));
    // by kind / class: a table indexed by the kind or class index
    this.types = types;
    this.typeTable = types.map((t) => {
      const r = this.rules.find((x) => x.value === t.name);
      return r ? r.c : this.def;
    });
    this.byValue = new Map(this.rules.map((r) => [r.value, r.c]));
    this.textured = this.def.tex >= 0 || this.rules.some((r) => r.c.tex >= 0);
    this.cache = new WeakMap(); // frame -> { rgba, tex }
  }

  /** { rgba: Uint32Array, tex: Float32Array } for the entities `e` of `frame`. */
  compute(frame, e) {
    const hit = this.cache.get(e);
    if (hit) return hit;
    const n = e.count;
    const rgba = new Uint32Array(n);
    const tex = new Float32Array(n);
    const put = (i, c) => { rgba[i] = c.rgba; tex[i] = c.tex; };
    switch (this.by) {
      case 'kind':
      case 'class': {
        const type = this.by === 'kind' ? e.kind : e.class;
        for (let i = 0; i < n; i++) put(i, (type && this.typeTable[type[i]]) || this.def);
        break;
      }
      case 'tag': {
        const perTag = frame.tags.map((t) => this.byValue.get(t) || this.def);
        for (let i = 0; i < n; i++) put(i, perTag[e.tag[i]] || this.def);
        break;
      }
      case 'number': {
        const rules = this.rules;
        for (let i = 0; i < n; i++) {
          const id = e.id[i];
          let c = this.def;
          for (let r = 0; r < rules.length; r++) {
            if (id >= rules[r].lo && id <= rules[r].hi) { c = rules[r].c; break; }
          }
          put(i, c);
        }
        break;
      }
      case 'led': {
        // The body takes the robot's first lit LED (a one-LED kind's only LED; for a ring, the
        // ring in order, then the beacon), so the colours still show on a zoomed-out swarm,
        // where no LED dots are drawn (main.js). A robot with every LED off keeps the default.
        const led = e.leds, width = e.widths.leds || 1, kind = e.kind;
        for (let i = 0; i < n; i++) {
          const count = led ? (this.types[kind ? kind[i] : 0]?.ledCount ?? 1) : 0;
          let c = 0;
          for (let j = 0; j < count && !(c >>> 24); j++) c = led[i * width + j];
          if (c >>> 24) { rgba[i] = c; tex[i] = -1; } else put(i, this.def);
        }
        break;
      }
      default:
        rgba.fill(this.def.rgba);
        tex.fill(this.def.tex);
    }
    const out = { rgba, tex };
    this.cache.set(e, out);
    return out;
  }
}
