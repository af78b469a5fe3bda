import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { registry } from '../../src/metrics.js';

/** The Grafana dashboard queries only metrics Ferry declares, and covers each of its own. */

interface Panel {
  title: string;
  targets: { expr: string }[];
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/ferry.json', import.meta.url), 'utf8'),
) as {
  panels: Panel[];
};

describe('deploy/grafana/ferry.json', () => {
  const declared = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
  const queried = new Set(
    dashboard.panels.flatMap((panel) =>
      panel.targets.flatMap((target) => target.expr.match(/ferry_[a-z_]+/g) ?? []),
    ),
  );
  const base = (name: string) => name.replace(/_(bucket|count|sum)$/, '');

  it('queries only declared metrics', () => {
    const unknown = [...queried].filter((name) => !declared.has(name) && !declared.has(base(name)));
    expect(unknown).toEqual([]);
  });

  it('has a panel for every ferry metric besides the process ones', () => {
    const own = [...declared].filter((name) => !/^ferry_(process|nodejs)_/.test(name));
    const shown = new Set([...queried].map(base));
    expect(own.filter((name) => !shown.has(name))).toEqual([]);
  });
});
