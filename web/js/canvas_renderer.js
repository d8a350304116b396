// Canvas2D renderer, used when WebGL2 is unavailable: same draw list as GlRenderer, drawn one
// shape at a time (slower; fine for thousands of robots, not for 100,000).

import { cssColor } from './colorings.js';

export class CanvasRenderer {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    if (!this.ctx) throw new Error('Canvas2D is not available either');
    this.name = 'canvas2d';
    this.device = 'Canvas2D';
    this.textures = [];
    this.rgbaCss = new Map();
    this.segments = [];
  }

  addEntityTexture(image) {
    this.textures.push(image);
    return this.textures.length - 1;
  }

  setMap(bitmap, bytes, segments) {
    this.segments = segments;
    if (!bitmap || !bytes) return;
    this.bitmap = bitmap;
    this.maskBytes = bytes;
    this.maskCanvas = null;
  }

  // The bitmap painted in one colour (or texture), rebuilt when that changes.
  mapCanvas(color, image) {
    const key = image || color.join(',');
    if (this.maskCanvas && this.maskKey === key) return this.maskCanvas;
    const { width, height } = this.bitmap;
    const c = document.createElement('canvas');
    c.width = width;
    c.height = height;
    const g = c.getContext('2d');
    const img = g.createImageData(width, height);
    const rgba = color.map((v, i) => Math.round(v * 255));
    for (let i = 0; i < width * height; i++) {
      if (!this.maskBytes[i]) continue;
      img.data.set(rgba, i * 4);
    }
    g.putImageData(img, 0, 0);
    if (image) {
      g.globalCompositeOperation = 'source-in';
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) g.drawImage(image, x, y, 1, 1);
      }
    }
    this.maskCanvas = c;
    this.maskKey = key;
    return c;
  }

  css(rgba) {
    let s = this.rgbaCss.get(rgba);
    if (!s) {
      s = `rgba(${rgba & 255},${(rgba >>> 8) & 255},${(rgba >>> 16) & 255},${(rgba >>> 24) / 255})`;
      this.rgbaCss.set(rgba, s);
    }
    return s;
  }

  draw(view, list) {
    const { width, height, scale, cx, cy } = view;
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
    }
    const g = this.ctx;
    const world = () => g.setTransform(scale, 0, 0, -scale, width / 2 - cx * scale,
      height / 2 + cy * scale);
    for (const item of list) {
      g.setTransform(1, 0, 0, 1, 0, 0);
      switch (item.type) {
        case 'clear':
          g.fillStyle = cssColor([...item.color.slice(0, 3), 1]);
          g.fillRect(0, 0, width, height);
          break;
        case 'rect':
          world();
          g.fillStyle = cssColor(item.color);
          g.fillRect(item.rect[0], item.rect[1], item.rect[2], item.rect[3]);
          break;
        case 'screen':
          if (item.image || item.canvas) g.drawImage(item.image || item.canvas, 0, 0, width, height);
          else { g.fillStyle = cssColor(item.color); g.fillRect(0, 0, width, height); }
          break;
        case 'map':
          world();
          if (this.bitmap) {
            const b = this.bitmap;
            g.imageSmoothingEnabled = false;
            g.save();
            g.translate(b.topLeft[0], b.topLeft[1]);
            g.scale(b.resolution, -b.resolution);
            g.drawImage(this.mapCanvas(item.color, item.image), 0, 0);
            g.restore();
          }
          g.strokeStyle = cssColor(item.color);
          g.lineWidth = Math.max(3 / scale, 0.02);
          g.beginPath();
          for (const s of this.segments) { g.moveTo(s[0], s[1]); g.lineTo(s[2], s[3]); }
          g.stroke();
          break;
        case 'entities':
          world();
          this.drawEntities(g, scale, item);
          break;
        case 'lines': {
          if (!item.count) break;
          world();
          const p = item.segments;
          g.strokeStyle = cssColor(item.color);
          g.lineWidth = item.widthPx / scale;
          g.beginPath();
          for (let k = 0; k < item.count; k++) {
            g.moveTo(p[4 * k], p[4 * k + 1]);
            g.lineTo(p[4 * k + 2], p[4 * k + 3]);
          }
          g.stroke();
          break;
        }
      }
    }
  }

  drawEntities(g, scale, item) {
    const e = item.entities;
    if (!e) return;
    const minR = 1.5 / scale;
    for (let i = 0; i < e.count; i++) {
      const r = Math.max(item.size[i], minR);
      const x = e.x[i], y = e.y[i];
      const tex = item.tex[i];
      const theta = e.theta ? e.theta[i] : 0;
      if (tex >= 0 && this.textures[tex]) {
        g.save();
        g.translate(x, y);
        if (item.rotation) g.rotate(theta);
        g.scale(1, -1);
        if (item.circle) { g.beginPath(); g.arc(0, 0, r, 0, 2 * Math.PI); g.clip(); }
        g.drawImage(this.textures[tex], -r, -r, 2 * r, 2 * r);
        g.restore();
      } else {
        g.fillStyle = this.css(item.rgba[i]);
        const box = item.box && item.box[2 * i] > 0;
        if (box) {
          // A box: half extents (fractions of r) along and across its heading.
          const l = item.box[2 * i] * r, w = item.box[2 * i + 1] * r;
          g.save();
          g.translate(x, y);
          g.rotate(theta);
          g.fillRect(-l, -w, 2 * l, 2 * w);
          g.restore();
        } else if (item.circle) {
          g.beginPath();
          g.arc(x, y, r, 0, 2 * Math.PI);
          g.fill();
        } else {
          g.fillRect(x - r, y - r, 2 * r, 2 * r);
        }
      }
      if (item.heading && r * scale >= 4) {
        g.strokeStyle = 'rgba(0,0,0,0.7)';
        g.lineWidth = (item.box && item.box[2 * i] > 0 ? item.box[2 * i + 1] : 1) * r * 0.3;
        g.beginPath();
        g.moveTo(x, y);
        g.lineTo(x + r * Math.cos(theta), y + r * Math.sin(theta));
        g.stroke();
      }
    }
  }

  readPixel(x, y) {
    return [...this.ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data];
  }
}
