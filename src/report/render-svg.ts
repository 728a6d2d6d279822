import type { TopLevelSpec } from 'vega-lite';

/**
 * Renders a vega-lite spec to an SVG string, in Node, with no network and no
 * canvas. vega and vega-lite load on the first chart: they are the heaviest
 * modules the package has, ES modules only, and nothing but the HTML report needs them.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
