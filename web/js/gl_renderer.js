// WebGL2 renderer: every robot or object of a layer in one instanced draw call, straight from
// the frame's typed arrays (x, y, theta are uploaded as received). Textures of entities live in
// one texture array so a layer mixing colours and textures is still one draw call.
//
// A draw list (built by main.js) is drawn in order; 2D drawings (labels, custom layers) come
// as canvases composited at their place in the list, so the configured layer order holds.

const ENTITY_VS = `#version 300 es
layout(location=0) in vec2 a_corner;
layout(location=1) in float a_x;
layout(location=2) in float a_y;
layout(location=3) in float a_theta;
layout(location=4) in float a_size;
layout(location=5) in vec4 a_color;
layout(location=6) in float a_tex;
layout(location=7) in vec2 a_box;
uniform vec4 u_view;
uniform float u_minRadius;
uniform bool u_rotate;
out vec2 v_local;
out vec2 v_body;
out vec2 v_turned;
flat out vec2 v_box;
out vec4 v_color;
flat out float v_tex;
flat out float v_pixels;
void main() {
  float r = max(a_size, u_minRadius);
  vec2 p = vec2(a_x, a_y) + a_corner * r;
  gl_Position = vec4(p * u_view.xy + u_view.zw, 0.0, 1.0);
  float c = cos(a_theta), s = sin(a_theta);
  v_local = a_corner;
  v_turned = vec2(c * a_corner.x + s * a_corner.y, -s * a_corner.x + c * a_corner.y);
  v_body = u_rotate ? v_turned : a_corner;
  v_box = a_box;
  v_color = a_color;
  v_tex = a_tex;
  v_pixels = r / u_minRadius * 1.5;
}`;

const ENTITY_FS = `#version 300 es
precision highp float;
precision highp sampler2DArray;
in vec2 v_local;
in vec2 v_body;
in vec2 v_turned;
flat in vec2 v_box;
in vec4 v_color;
flat in float v_tex;
flat in float v_pixels;
uniform bool u_circle;
uniform bool u_heading;
uniform sampler2DArray u_textures;
out vec4 o_color;
void main() {
  float d = u_circle ? length(v_local) : max(abs(v_local.x), abs(v_local.y));
  // A box: half extents v_box (fractions of the radius) along and across the heading.
  vec2 edge = v_box - abs(v_turned);
  bool box = v_box.x > 0.0;
  if (box ? min(edge.x, edge.y) < 0.0 : d > 1.0) discard;
  vec4 c = v_color;
  if (v_tex >= 0.0) {
    c = texture(u_textures, vec3(v_body.x * 0.5 + 0.5, 0.5 - v_body.y * 0.5, v_tex));
  }
  if (v_pixels >= 4.0) {
    if (u_heading && v_body.x > 0.0 && abs(v_body.y) < (box ? 0.16 * v_box.y : 0.16)) c.rgb *= 0.3;
    if (box ? min(edge.x, edge.y) * v_pixels < 1.5 : d > 1.0 - 1.5 / v_pixels) c.rgb *= 0.55;
  }
  o_color = c;
}`;

// The same entities as points (one vertex each): software GL (SwiftShader, what headless
// Chromium without a GPU uses) pays a large fixed cost per instance, and none per point. Used
// whenever the largest entity fits the maximum point size.
const POINT_VS = `#version 300 es
layout(location=1) in float a_x;
layout(location=2) in float a_y;
layout(location=3) in float a_theta;
layout(location=4) in float a_size;
layout(location=5) in vec4 a_color;
layout(location=6) in float a_tex;
layout(location=7) in vec2 a_box;
uniform vec4 u_view;
uniform float u_minRadius;
uniform float u_pixelsPerMetre;
out vec4 v_color;
flat out float v_tex;
flat out float v_pixels;
flat out vec2 v_axis;
flat out vec2 v_box;
void main() {
  v_box = a_box;
  float r = max(a_size, u_minRadius);
  gl_Position = vec4(vec2(a_x, a_y) * u_view.xy + u_view.zw, 0.0, 1.0);
  gl_PointSize = 2.0 * r * u_pixelsPerMetre;
  v_color = a_color;
  v_tex = a_tex;
  v_pixels = r * u_pixelsPerMetre;
  v_axis = vec2(cos(a_theta), sin(a_theta));
}`;

const POINT_FS = `#version 300 es
precision highp float;
precision highp sampler2DArray;
in vec4 v_color;
flat in float v_tex;
flat in float v_pixels;
flat in vec2 v_axis;
flat in vec2 v_box;
uniform bool u_circle;
uniform bool u_heading;
uniform bool u_rotate;
uniform sampler2DArray u_textures;
out vec4 o_color;
void main() {
  vec2 local = vec2(gl_PointCoord.x * 2.0 - 1.0, 1.0 - gl_PointCoord.y * 2.0);
  float d = u_circle ? length(local) : max(abs(local.x), abs(local.y));
  vec2 turned = vec2(dot(local, v_axis), v_axis.x * local.y - v_axis.y * local.x);
  vec2 edge = v_box - abs(turned);
  bool box = v_box.x > 0.0;
  if (box ? min(edge.x, edge.y) < 0.0 : d > 1.0) discard;
  vec2 body = u_rotate ? turned : local;
  vec4 c = v_color;
  if (v_tex >= 0.0) c = texture(u_textures, vec3(body.x * 0.5 + 0.5, 0.5 - body.y * 0.5, v_tex));
  if (v_pixels >= 4.0) {
    if (u_heading && body.x > 0.0 && abs(body.y) < (box ? 0.16 * v_box.y : 0.16)) c.rgb *= 0.3;
    if (box ? min(edge.x, edge.y) * v_pixels < 1.5 : d > 1.0 - 1.5 / v_pixels) c.rgb *= 0.55;
  }
  o_color = c;
}`;

const MAP_VS = `#version 300 es
layout(location=0) in vec2 a_corner;
uniform vec4 u_view;
uniform vec4 u_rect;
out vec2 v_uv;
void main() {
  vec2 uv = a_corner * 0.5 + 0.5;
  vec2 p = vec2(u_rect.x + uv.x * u_rect.z, u_rect.y - uv.y * u_rect.w);
  gl_Position = vec4(p * u_view.xy + u_view.zw, 0.0, 1.0);
  v_uv = uv;
}`;

const MAP_FS = `#version 300 es
precision highp float;
in vec2 v_uv;
uniform sampler2D u_mask;
uniform sampler2D u_texture;
uniform bool u_useTexture;
uniform vec4 u_color;
uniform vec2 u_cells;
out vec4 o_color;
void main() {
  if (texture(u_mask, v_uv).r < 0.5) discard;
  o_color = u_useTexture ? texture(u_texture, fract(v_uv * u_cells)) : u_color;
}`;

const SEGMENT_VS = `#version 300 es
layout(location=0) in vec2 a_corner;
layout(location=1) in vec4 a_segment;
uniform vec4 u_view;
uniform float u_halfWidth;
void main() {
  vec2 a = a_segment.xy, b = a_segment.zw;
  vec2 dir = b - a;
  float len = length(dir);
  vec2 t = len > 0.0 ? dir / len : vec2(1.0, 0.0);
  vec2 n = vec2(-t.y, t.x);
  vec2 p = mix(a, b, a_corner.x * 0.5 + 0.5) + (n * a_corner.y + t * a_corner.x) * u_halfWidth;
  gl_Position = vec4(p * u_view.xy + u_view.zw, 0.0, 1.0);
}`;

const FLAT_FS = `#version 300 es
precision highp float;
uniform vec4 u_color;
out vec4 o_color;
void main() { o_color = u_color; }`;

const RECT_VS = `#version 300 es
layout(location=0) in vec2 a_corner;
uniform vec4 u_view;
uniform vec4 u_rect;
void main() {
  vec2 p = vec2(u_rect.x, u_rect.y) + (a_corner * 0.5 + 0.5) * u_rect.zw;
  gl_Position = vec4(p * u_view.xy + u_view.zw, 0.0, 1.0);
}`;

const SCREEN_VS = `#version 300 es
layout(location=0) in vec2 a_corner;
out vec2 v_uv;
void main() {
  v_uv = vec2(a_corner.x * 0.5 + 0.5, 0.5 - a_corner.y * 0.5);
  gl_Position = vec4(a_corner, 0.0, 1.0);
}`;

const SCREEN_FS = `#version 300 es
precision highp float;
in vec2 v_uv;
uniform sampler2D u_texture;
uniform bool u_useTexture;
uniform vec4 u_color;
out vec4 o_color;
void main() { o_color = u_useTexture ? texture(u_texture, v_uv) : u_color; }`;

const TEXTURE_SIZE = 128;
const SPLAT_MIN_COUNT = 20000;
const SPLAT_MAX_RADIUS_PX = 2.5;
const MAX_TEXTURES = 64;

function compile(gl, vs, fs) {
  const prog = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) {
      throw new Error('shader: ' + gl.getShaderInfoLog(s));
    }
    gl.attachShader(prog, s);
  }
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) {
    throw new Error('program: ' + gl.getProgramInfoLog(prog));
  }
  const uniforms = {};
  const n = gl.getProgramParameter(prog, gl.ACTIVE_UNIFORMS);
  for (let i = 0; i < n; i++) {
    const name = gl.getActiveUniform(prog, i).name;
    uniforms[name] = gl.getUniformLocation(prog, name);
  }
  return { prog, u: uniforms };
}

export class GlRenderer {
  /** Throws when WebGL2 is not available (the caller then uses the Canvas2D renderer). */
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', {
      antialias: false, alpha: false, premultipliedAlpha: false, preserveDrawingBuffer: false,
    });
    if (!gl) throw new Error('WebGL2 is not available');
    this.gl = gl;
    this.canvas = canvas;
    this.name = 'webgl2';
    const dbg = gl.getExtension('WEBGL_debug_renderer_info');
    this.device = dbg ? gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
    this.entity = compile(gl, ENTITY_VS, ENTITY_FS);
    this.points = compile(gl, POINT_VS, POINT_FS);
    this.maxPointSize = gl.getParameter(gl.ALIASED_POINT_SIZE_RANGE)[1];
    const params = new URLSearchParams(location.search);
    this.usePoints = params.get('points') !== 'off';
    this.useSplat = params.get('splat') !== 'off';
    this.maxSizes = new WeakMap(); // size array -> its largest entry
    // The 2D canvas a large swarm is stamped into, over this one (draw()); ?overlay=off draws
    // it into a texture of this canvas instead.
    this.ids = new WeakMap();
    this.idCount = 0;
    if (params.get('overlay') !== 'off' && canvas.parentNode) {
      this.overlay = document.createElement('canvas');
      this.overlay.className = 'scene-overlay';
      this.overlay.hidden = true;
      canvas.after(this.overlay);
    }
    this.map = compile(gl, MAP_VS, MAP_FS);
    this.segment = compile(gl, SEGMENT_VS, FLAT_FS);
    this.rect = compile(gl, RECT_VS, FLAT_FS);
    this.screen = compile(gl, SCREEN_VS, SCREEN_FS);

    this.quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);

    // Per-layer instance buffers, reused; re-uploaded only when the frame changes.
    this.instances = new Map();
    this.lineBuffers = new Map();
    this.segmentBuffer = null;
    this.segmentCount = 0;

    this.textures = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.textures);
    gl.texStorage3D(gl.TEXTURE_2D_ARRAY, 1, gl.RGBA8, TEXTURE_SIZE, TEXTURE_SIZE, MAX_TEXTURES);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    this.textureCount = 0;
    this.images = new Map(); // image -> 2D texture (background, map, overlay canvases)
    gl.enable(gl.BLEND);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  }

  /** Adds an entity texture (an image, drawn at 128 x 128); returns its layer index. */
  addEntityTexture(image) {
    if (this.textureCount >= MAX_TEXTURES) return -1;
    const c = document.createElement('canvas');
    c.width = c.height = TEXTURE_SIZE;
    c.getContext('2d').drawImage(image, 0, 0, TEXTURE_SIZE, TEXTURE_SIZE);
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.textures);
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, this.textureCount, TEXTURE_SIZE, TEXTURE_SIZE,
      1, gl.RGBA, gl.UNSIGNED_BYTE, c);
    return this.textureCount++;
  }

  /** The obstacle map: bitmap bytes (1 = obstacle) and segments (relative to the centre). */
  setMap(bitmap, bytes, segments) {
    const gl = this.gl;
    if (bitmap && bytes) {
      const mask = new Uint8Array(bytes.length);
      for (let i = 0; i < bytes.length; i++) mask[i] = bytes[i] ? 255 : 0;
      this.mask = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, this.mask);
      gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.R8, bitmap.width, bitmap.height, 0, gl.RED,
        gl.UNSIGNED_BYTE, mask);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      this.bitmap = bitmap;
    }
    if (segments.length) {
      this.segmentBuffer = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, this.segmentBuffer);
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(segments.flat()), gl.STATIC_DRAW);
      this.segmentCount = segments.length;
    }
  }

  texture2d(source, repeat) {
    const gl = this.gl;
    let t = this.images.get(source);
    const fresh = !t;
    if (fresh) {
      t = gl.createTexture();
      this.images.set(source, t);
    }
    gl.bindTexture(gl.TEXTURE_2D, t);
    if (fresh || source instanceof HTMLCanvasElement) {
      gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, source);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      const wrap = repeat ? gl.REPEAT : gl.CLAMP_TO_EDGE;
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, wrap);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, wrap);
    }
    return t;
  }

  quadAttrib() {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
    gl.vertexAttribDivisor(0, 0);
  }

  instanceAttrib(loc, buffer, size, type, normalized, divisor = 1) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, size, type, normalized, 0, 0);
    gl.vertexAttribDivisor(loc, divisor);
  }

  resetAttribs() {
    const gl = this.gl;
    for (let i = 1; i < 8; i++) {
      gl.disableVertexAttribArray(i);
      gl.vertexAttribDivisor(i, 0);
    }
  }

  /**
   * Draws the list. `view` = { scale (device px per metre), cx, cy, width, height }.
   *
   * A large swarm seen whole, drawn last (robots on top: the default order), is stamped into
   * an image of the window shown on a 2D canvas laid over this one (`overlay`), and what is
   * under it is drawn with WebGL only when it changes (the view, the map, objects, lines ...):
   * in software, redrawing the WebGL canvas costs a full readback of it per frame. `force`
   * redraws everything (for reading pixels back).
   */
  draw(view, list, force = false) {
    const gl = this.gl;
    const { width, height } = view;
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.baseKey = null;
    }
    const last = list[list.length - 1];
    const overlay = this.overlay && last && last.type === 'entities' && this.splatting(view, last);
    if (overlay) {
      const key = this.keyOf(view, list.slice(0, -1));
      if (force || key !== this.baseKey) {
        this.drawList(view, list.slice(0, -1));
        this.baseKey = key;
      }
      this.splatOverlay(view, last);
      this.lastMode = 'splat';
      return;
    }
    this.baseKey = null;
    if (this.overlayShown) {
      this.overlay.hidden = true;
      this.overlayShown = false;
    }
    this.drawList(view, list);
  }

  /** A key that changes when what `list` draws may change (the objects drawn, not their values). */
  keyOf(view, list) {
    const id = (o) => {
      if (!o || typeof o !== 'object') return String(o);
      if (!this.ids.has(o)) this.ids.set(o, ++this.idCount);
      return this.ids.get(o);
    };
    let key = `${view.width}x${view.height}@${view.scale},${view.cx},${view.cy}`;
    for (const item of list) {
      if (item.type === 'entities' && item.entities.count === 0) continue; // (draws nothing)
      key += `|${item.type}:${id(item.entities)}:${id(item.rgba)}:${id(item.size)}:` +
        `${id(item.segments)}:${id(item.image)}:${item.color}:${item.rect}:${id(item.canvas)}`;
      // A 2D overlay (labels, custom layers) is drawn anew at every render.
      if (item.canvas) key += `:${++this.idCount}`;
    }
    return key;
  }

  drawList(view, list) {
    const gl = this.gl;
    const { width, height } = view;
    gl.viewport(0, 0, width, height);
    const sx = 2 * view.scale / width, sy = 2 * view.scale / height;
    const uView = [sx, sy, -view.cx * sx, -view.cy * sy];
    for (const item of list) {
      switch (item.type) {
        case 'clear':
          gl.clearColor(item.color[0], item.color[1], item.color[2], 1);
          gl.clear(gl.COLOR_BUFFER_BIT);
          break;
        case 'rect': {
          const p = this.rect;
          gl.useProgram(p.prog);
          this.quadAttrib();
          gl.uniform4fv(p.u.u_view, uView);
          gl.uniform4fv(p.u.u_rect, item.rect);
          gl.uniform4fv(p.u.u_color, item.color);
          gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
          break;
        }
        case 'screen': {
          const p = this.screen;
          gl.useProgram(p.prog);
          this.quadAttrib();
          const src = item.image || item.canvas;
          gl.uniform1i(p.u.u_useTexture, src ? 1 : 0);
          gl.uniform4fv(p.u.u_color, item.color || [0, 0, 0, 0]);
          if (src) {
            gl.activeTexture(gl.TEXTURE0);
            gl.bindTexture(gl.TEXTURE_2D, this.texture2d(src, false));
            gl.uniform1i(p.u.u_texture, 0);
          }
          gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
          break;
        }
        case 'map':
          this.drawMap(uView, view, item);
          break;
        case 'entities':
          this.drawEntities(uView, view, item);
          break;
        case 'lines':
          this.drawLines(uView, view, item);
          break;
      }
    }
  }

  /** Segments [ax, ay, bx, by, ...] (relative to the centre) `widthPx` device pixels wide. */
  drawLines(uView, view, item) {
    if (!item.count) return;
    const gl = this.gl;
    let b = this.lineBuffers.get(item.key);
    if (!b) {
      b = { buffer: gl.createBuffer(), source: null };
      this.lineBuffers.set(item.key, b);
    }
    if (b.source !== item.segments) {
      gl.bindBuffer(gl.ARRAY_BUFFER, b.buffer);
      gl.bufferData(gl.ARRAY_BUFFER, item.segments, gl.STREAM_DRAW);
      b.source = item.segments;
    }
    const p = this.segment;
    gl.useProgram(p.prog);
    this.quadAttrib();
    this.instanceAttrib(1, b.buffer, 4, gl.FLOAT, false);
    gl.uniform4fv(p.u.u_view, uView);
    gl.uniform1f(p.u.u_halfWidth, item.widthPx / 2 / view.scale);
    gl.uniform4fv(p.u.u_color, item.color);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, item.count);
    this.resetAttribs();
  }

  drawMap(uView, view, item) {
    const gl = this.gl;
    if (this.mask && this.bitmap) {
      const p = this.map;
      const b = this.bitmap;
      gl.useProgram(p.prog);
      this.quadAttrib();
      gl.uniform4fv(p.u.u_view, uView);
      gl.uniform4fv(p.u.u_rect, [b.topLeft[0], b.topLeft[1], b.width * b.resolution,
        b.height * b.resolution]);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.mask);
      gl.uniform1i(p.u.u_mask, 0);
      gl.uniform1i(p.u.u_useTexture, item.image ? 1 : 0);
      if (item.image) {
        gl.activeTexture(gl.TEXTURE1);
        gl.bindTexture(gl.TEXTURE_2D, this.texture2d(item.image, true));
        gl.uniform1i(p.u.u_texture, 1);
      }
      gl.uniform2f(p.u.u_cells, b.width, b.height);
      gl.uniform4fv(p.u.u_color, item.color);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    }
    if (this.segmentCount) {
      const p = this.segment;
      gl.useProgram(p.prog);
      this.quadAttrib();
      this.instanceAttrib(1, this.segmentBuffer, 4, gl.FLOAT, false);
      gl.uniform4fv(p.u.u_view, uView);
      gl.uniform1f(p.u.u_halfWidth, Math.max(1.5 / view.scale, 0.01));
      gl.uniform4fv(p.u.u_color, item.color);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, this.segmentCount);
      this.resetAttribs();
    }
  }

  buffersFor(key) {
    let b = this.instances.get(key);
    if (!b) {
      const gl = this.gl;
      b = { x: gl.createBuffer(), y: gl.createBuffer(), theta: gl.createBuffer(),
        size: gl.createBuffer(), color: gl.createBuffer(), tex: gl.createBuffer(),
        box: gl.createBuffer(), source: null };
      this.instances.set(key, b);
    }
    return b;
  }

  drawEntities(uView, view, item) {
    const gl = this.gl;
    const e = item.entities;
    if (!e || e.count === 0) return;
    const b = this.buffersFor(item.key);
    if (b.maxSizeSource !== item.size) {
      let m = 0;
      for (let i = 0; i < item.size.length; i++) if (item.size[i] > m) m = item.size[i];
      b.maxSize = m;
      b.maxSizeSource = item.size;
    }
    // A large swarm seen whole: every entity is a dot of a few pixels. Software GL spends
    // ~1 microsecond per point whatever the shader, so the dots are stamped into an image in
    // JavaScript and the image is drawn as one texture (same picture: no heading is drawn at
    // that size anyway).
    if (this.splatting(view, item)) {
      this.splat(view, item);
      this.lastMode = 'splat';
      return;
    }
    if (b.source !== e || b.colorSource !== item.rgba) {
      const up = (buf, data) => {
        gl.bindBuffer(gl.ARRAY_BUFFER, buf);
        gl.bufferData(gl.ARRAY_BUFFER, data, gl.STREAM_DRAW);
      };
      up(b.x, e.x);
      up(b.y, e.y);
      up(b.theta, e.theta || new Float32Array(e.count));
      up(b.size, item.size);
      up(b.color, item.rgba);
      up(b.tex, item.tex);
      if (item.box) up(b.box, item.box);
      b.source = e;
      b.colorSource = item.rgba;
    }
    // Points when the largest entity fits the point size limit, else instanced quads.
    const points = this.usePoints && 2 * b.maxSize * view.scale <= this.maxPointSize;
    const p = points ? this.points : this.entity;
    gl.useProgram(p.prog);
    const divisor = points ? 0 : 1;
    if (!points) this.quadAttrib();
    else gl.disableVertexAttribArray(0);
    this.instanceAttrib(1, b.x, 1, gl.FLOAT, false, divisor);
    this.instanceAttrib(2, b.y, 1, gl.FLOAT, false, divisor);
    this.instanceAttrib(3, b.theta, 1, gl.FLOAT, false, divisor);
    this.instanceAttrib(4, b.size, 1, gl.FLOAT, false, divisor);
    this.instanceAttrib(5, b.color, 4, gl.UNSIGNED_BYTE, true, divisor);
    this.instanceAttrib(6, b.tex, 1, gl.FLOAT, false, divisor);
    // Boxes: each entity's half extents as fractions of its radius; (0, 0) for a circle.
    if (item.box) this.instanceAttrib(7, b.box, 2, gl.FLOAT, false, divisor);
    else gl.vertexAttrib2f(7, 0, 0);
    gl.uniform4fv(p.u.u_view, uView);
    gl.uniform1f(p.u.u_minRadius, 1.5 / view.scale);
    if (points) gl.uniform1f(p.u.u_pixelsPerMetre, view.scale);
    gl.uniform1i(p.u.u_rotate, item.rotation ? 1 : 0);
    gl.uniform1i(p.u.u_heading, item.heading ? 1 : 0);
    gl.uniform1i(p.u.u_circle, item.circle ? 1 : 0);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.textures);
    gl.uniform1i(p.u.u_textures, 0);
    if (points) gl.drawArrays(gl.POINTS, 0, e.count);
    else gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, e.count);
    this.resetAttribs();
    this.lastMode = points ? 'points' : 'instanced';
  }

  /** Whether entity item `item` is drawn by stamping its entities into an image. */
  splatting(view, item) {
    const e = item.entities;
    if (!this.useSplat || !e || e.count < SPLAT_MIN_COUNT || item.textured) return false;
    let m = this.maxSizes.get(item.size);
    if (m === undefined) {
      m = 0;
      for (let i = 0; i < item.size.length; i++) if (item.size[i] > m) m = item.size[i];
      this.maxSizes.set(item.size, m);
    }
    return Math.max(m * view.scale, 1.5) <= SPLAT_MAX_RADIUS_PX;
  }

  /** Stamps the entities into the overlay canvas's image (see draw()). */
  splatOverlay(view, item) {
    const { width, height } = view;
    const c = this.overlay;
    if (c.width !== width || c.height !== height || !this.overlayImage) {
      c.width = width;
      c.height = height;
      this.overlayImage = new ImageData(width, height);
    }
    this.stamp(view, item, new Uint32Array(this.overlayImage.data.buffer));
    c.getContext('2d').putImageData(this.overlayImage, 0, 0);
    if (!this.overlayShown) {
      c.hidden = false;
      this.overlayShown = true;
    }
  }

  /** Writes every entity of `item` as a disc of its colour into `px` (the window, cleared first). */
  stamp(view, item, px) {
    const { width, height, scale, cx, cy } = view;
    px.fill(0);
    const e = item.entities, size = item.size, rgba = item.rgba;
    const ox = width / 2 - cx * scale, oy = height / 2 + cy * scale;
    for (let i = 0; i < e.count; i++) {
      const sx = ox + e.x[i] * scale, sy = oy - e.y[i] * scale;
      const r = Math.max(size[i] * scale, 1.5);
      if (sx < -r || sy < -r || sx >= width + r || sy >= height + r) continue;
      const r2 = r * r, c = rgba[i];
      const x0 = Math.max(0, Math.ceil(sx - r - 0.5)), x1 = Math.min(width - 1, Math.floor(sx + r - 0.5));
      const y0 = Math.max(0, Math.ceil(sy - r - 0.5)), y1 = Math.min(height - 1, Math.floor(sy + r - 0.5));
      for (let y = y0; y <= y1; y++) {
        const dy = y + 0.5 - sy, row = y * width;
        for (let x = x0; x <= x1; x++) {
          const dx = x + 0.5 - sx;
          if (dx * dx + dy * dy <= r2) px[row + x] = c;
        }
      }
    }
  }

  /** Stamps every entity as a disc into an RGBA image of the window and draws that image. */
  splat(view, item) {
    const { width, height } = view;
    if (!this.splatPixels || this.splatPixels.length !== width * height) {
      this.splatPixels = new Uint32Array(width * height);
      this.splatCanvas = { width, height };
    }
    this.stamp(view, item, this.splatPixels);
    const px = this.splatPixels;
    const gl = this.gl;
    if (!this.splatTexture || this.splatSize !== width * 65536 + height) {
      if (this.splatTexture) gl.deleteTexture(this.splatTexture);
      this.splatTexture = gl.createTexture();
      this.splatSize = width * 65536 + height;
      gl.bindTexture(gl.TEXTURE_2D, this.splatTexture);
      gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA8, width, height);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    }
    gl.bindTexture(gl.TEXTURE_2D, this.splatTexture);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);
    gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE,
      new Uint8Array(px.buffer));
    const p = this.screen;
    gl.useProgram(p.prog);
    this.quadAttrib();
    gl.uniform1i(p.u.u_useTexture, 1);
    gl.activeTexture(gl.TEXTURE0);
    gl.uniform1i(p.u.u_texture, 0);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
  }

  /** RGBA bytes at device pixel (x, y from the top left); call right after draw(..., true). */
  readPixel(x, y) {
    const gl = this.gl;
    const out = new Uint8Array(4);
    gl.readPixels(Math.round(x), this.canvas.height - 1 - Math.round(y), 1, 1, gl.RGBA,
      gl.UNSIGNED_BYTE, out);
    if (this.overlayShown) { // the overlay's pixel over it, as the browser composites them
      const d = this.overlayImage.data, k = 4 * (Math.round(y) * this.overlayImage.width + Math.round(x));
      const a = d[k + 3] / 255;
      for (let i = 0; i < 3; i++) out[i] = Math.round(a * d[k + i] + (1 - a) * out[i]);
    }
    return [...out];
  }

  /** The picture as shown (with the overlay, if any); call right after draw(..., true). */
  composited() {
    if (!this.overlayShown) return this.canvas;
    const c = document.createElement('canvas');
    c.width = this.canvas.width;
    c.height = this.canvas.height;
    const g = c.getContext('2d');
    g.drawImage(this.canvas, 0, 0);
    g.drawImage(this.overlay, 0, 0);
    return c;
  }
}
