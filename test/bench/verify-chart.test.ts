import { describe, expect, test } from 'vitest';
import { formatMicroseconds, verifyChartSvg } from '../../bench/verify-chart.js';

const panels = [
  {
    title: '1 KiB body',
    bars: [
      { label: 'svc-webhooks', microseconds: 6, highlight: true },
      { label: 'svix', microseconds: 18 },
      { label: 'node:crypto (the limit)', microseconds: 5.4 },
    ],
  },
  { title: '64 KiB body', bars: [{ label: 'svc-webhooks', microseconds: 150, highlight: true }, { label: 'svix', microseconds: 600 }] },
];
const svg = verifyChartSvg('Verifying a signed webhook', 'Node v20.0.0 <test> & "co"', panels);
const widths = [...svg.matchAll(/<rect x="200" y="[\d.]+" width="([\d.]+)"[^>]*fill="(#[0-9a-f]+)"/g)].map((match) => ({ width: Number(match[1]), fill: match[2] }));

describe('verifyChartSvg', () => {
  test('one bar per measurement, as long as its time against the longest of its panel', () => {
    expect(widths.map((bar) => bar.width)).toEqual([110, 330, 99, 82.5, 330]);
  });

  test('the package in the accent colour, the others in grey', () => {
    expect(widths.map((bar) => bar.fill)).toEqual(['#2563eb', '#9ca3af', '#9ca3af', '#2563eb', '#9ca3af']);
  });

  test('each bar is labelled with its name and time, each panel with its title', () => {
    for (const text of ['1 KiB body', '64 KiB body', '>svix<', '>node:crypto (the limit)<', '>6.00 µs<', '>18.0 µs<', '>600 µs<']) expect(svg).toContain(text);
  });

  test('text is escaped for XML', () => {
    expect(svg).toContain('Node v20.0.0 &lt;test&gt; &amp; &quot;co&quot;');
    expect(svg).not.toContain('<test>');
  });

  test('the picture is as tall as its bars', () => {
    const height = Number(/<svg [^>]*height="(\d+)"/.exec(svg)?.[1]);
    const lastBar = Math.max(...[...svg.matchAll(/<rect x="200" y="([\d.]+)"/g)].map((match) => Number(match[1])));
    expect(height).toBeGreaterThan(lastBar + 22);
    expect(height).toBeLessThan(lastBar + 100);
  });
});

describe('formatMicroseconds', () => {
  test('two decimals under 10 µs, one under 100, none above', () => {
    expect([5.4123, 42.345, 612.4].map(formatMicroseconds)).toEqual(['5.41', '42.3', '612']);
  });
});
