/**
 * The verification benchmark as a picture: a horizontal bar chart of the
 * time per verification, one panel per body size, drawn as plain SVG (no
 * chart dependency) for docs/bench.svg. Each panel has its own scale: 64 KiB
 * costs some 30 times what 1 KiB does, and one scale would flatten 1 KiB.
 */

export interface ChartBar {
  readonly label: string;
  readonly microseconds: number;
  /** Drawn in the accent colour: the package itself. */
  readonly highlight?: boolean;
}

export interface ChartPanel {
  /** `1 KiB body`, … */
  readonly title: string;
  readonly bars: readonly ChartBar[];
}

const WIDTH = 640;
const LABEL_WIDTH = 200;
const BAR_AREA = 330;
const BAR_HEIGHT = 22;
const BAR_GAP = 8;
const PANEL_GAP = 22;
const TOP = 58;
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

const escape = (text: string): string => text.replace(/[<>&"]/g, (c) => `&${{ '<': 'lt', '>': 'gt', '&': 'amp', '"': 'quot' }[c]};`);
const round = (value: number): number => Math.round(value * 10) / 10;

/** µs with the precision the size calls for: 5.41, 42.3, 612. */
export function formatMicroseconds(value: number): string {
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

/** The chart as an SVG document; `caption` says where the numbers come from. */
export function verifyChartSvg(title: string, caption: string, panels: readonly ChartPanel[]): string {
  const parts: string[] = [];
  let y = TOP;
  for (const panel of panels) {
    const longest = Math.max(...panel.bars.map((bar) => bar.microseconds));
    parts.push(`<text x="20" y="${y + 14}" font-size="14" font-weight="600" fill="#111827">${escape(panel.title)}</text>`);
    y += 24;
    for (const bar of panel.bars) {
      const width = round((bar.microseconds / longest) * BAR_AREA);
      const fill = bar.highlight === true ? '#2563eb' : '#9ca3af';
      const middle = y + BAR_HEIGHT / 2 + 4.5;
      parts.push(
        `<text x="${LABEL_WIDTH - 10}" y="${middle}" font-size="13" text-anchor="end" fill="#374151">${escape(bar.label)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${y}" width="${width}" height="${BAR_HEIGHT}" rx="3" fill="${fill}"><title>${escape(`${bar.label}: ${formatMicroseconds(bar.microseconds)} µs`)}</title></rect>`,
        `<text x="${round(LABEL_WIDTH + width + 8)}" y="${middle}" font-size="13" fill="#111827">${formatMicroseconds(bar.microseconds)} µs</text>`,
      );
      y += BAR_HEIGHT + BAR_GAP;
    }
    y += PANEL_GAP - BAR_GAP;
  }
  const height = y + 24;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escape(title)}" ${FONT}>`,
    `<rect width="${WIDTH}" height="${height}" rx="6" fill="#ffffff"/>`,
    `<text x="20" y="28" font-size="16" font-weight="700" fill="#111827">${escape(title)}</text>`,
    `<text x="20" y="46" font-size="12" fill="#6b7280">${escape('Time per verification, lower is better')}</text>`,
    ...parts,
    `<text x="20" y="${height - 12}" font-size="11" fill="#6b7280">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
