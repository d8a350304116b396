// A custom viewer layer (docs/view-format.md, "Custom layers"): a metric grid over the arena.
// <custom script="grid.js" arg="SPACING_IN_METRES"/>
export function create(arg, api) {
  const spacing = Number(arg) > 0 ? Number(arg) : 1;
  const { width, height } = api.header.arena;
  return {
    render(ctx, frame, view) {
      if (spacing * view.scale < 8) return; // too dense to be useful at this zoom
      ctx.strokeStyle = 'rgba(0, 0, 120, 0.25)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let x = -width / 2; x <= width / 2 + 1e-9; x += spacing) {
        const [ax, ay] = view.toScreen(x, -height / 2);
        const [bx, by] = view.toScreen(x, height / 2);
        ctx.moveTo(ax, ay);
        ctx.lineTo(bx, by);
      }
      for (let y = -height / 2; y <= height / 2 + 1e-9; y += spacing) {
        const [ax, ay] = view.toScreen(-width / 2, y);
        const [bx, by] = view.toScreen(width / 2, y);
        ctx.moveTo(ax, ay);
        ctx.lineTo(bx, by);
      }
      ctx.stroke();
    },
  };
}
