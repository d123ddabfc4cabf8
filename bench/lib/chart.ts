import * as vega from 'vega';
import type { ChartPoint } from './results.js';

/**
 * Per-turn checkpoint cost against project size, as an SVG drawn by vega
 * (both axes logarithmic: the contenders are orders of magnitude apart).
 */
export async function checkpointChart(points: readonly ChartPoint[]): Promise<string> {
  const spec: vega.Spec = {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    description: 'Per-turn checkpoint cost against project size',
    width: 560,
    height: 320,
    padding: 8,
    background: 'white',
    title: { text: 'Per-turn checkpoint (20 tracked files, 5 changed): median ms', anchor: 'start', fontSize: 14 },
    data: [{ name: 'points', values: points.map((point) => ({ ...point })) }],
    scales: [
      { name: 'x', type: 'log', domain: { data: 'points', field: 'files' }, range: 'width', nice: false, zero: false },
      { name: 'y', type: 'log', domain: { data: 'points', field: 'ms' }, range: 'height', nice: true, zero: false },
      { name: 'color', type: 'ordinal', domain: { data: 'points', field: 'series' }, range: ['#1f77b4', '#2ca02c', '#d62728'] },
    ],
    axes: [
      { orient: 'bottom', scale: 'x', title: 'files in the project', values: [...new Set(points.map((point) => point.files))], format: ',d' },
      { orient: 'left', scale: 'y', title: 'ms per checkpoint (log scale)', grid: true, format: '~g' },
    ],
    legends: [{ fill: 'color', stroke: 'color', orient: 'bottom', direction: 'vertical', symbolType: 'circle', labelLimit: 400 }],
    marks: [
      {
        type: 'group',
        from: { facet: { name: 'series', data: 'points', groupby: 'series' } },
        marks: [
          {
            type: 'line',
            from: { data: 'series' },
            encode: { enter: { x: { scale: 'x', field: 'files' }, y: { scale: 'y', field: 'ms' }, stroke: { scale: 'color', field: 'series' }, strokeWidth: { value: 2 } } },
          },
          {
            type: 'symbol',
            from: { data: 'series' },
            encode: { enter: { x: { scale: 'x', field: 'files' }, y: { scale: 'y', field: 'ms' }, fill: { scale: 'color', field: 'series' }, size: { value: 50 } } },
          },
          {
            type: 'text',
            from: { data: 'series' },
            encode: {
              enter: {
                x: { scale: 'x', field: 'files' },
                y: { scale: 'y', field: 'ms' },
                dy: { value: -8 },
                align: { value: 'center' },
                fontSize: { value: 10 },
                fill: { value: '#333' },
                text: { signal: "datum.ms >= 10 ? format(datum.ms, '.0f') : format(datum.ms, '.2f')" },
              },
            },
          },
        ],
      },
    ],
  };
  const view = new vega.View(vega.parse(spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
