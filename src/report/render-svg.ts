import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** Renders a vega-lite spec to an SVG string, in Node, with no network and no canvas. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
