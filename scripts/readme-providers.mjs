#!/usr/bin/env node
/** Writes the README's deep-connector table (between its `providers` markers) from the catalog. */
import { readFileSync, writeFileSync } from 'node:fs';
import { tsImport } from 'tsx/esm/api';

const { supportTable } = await tsImport('../src/providers/catalog/support-table.ts', import.meta.url);
const readme = new URL('../README.md', import.meta.url);
const text = readFileSync(readme, 'utf8');
const start = '<!-- providers:start -->';
const end = '<!-- providers:end -->';
const from = text.indexOf(start);
const to = text.indexOf(end);
if (from < 0 || to < from) throw new Error(`README.md has no ${start} … ${end} block`);
writeFileSync(readme, `${text.slice(0, from + start.length)}\n${supportTable()}\n${text.slice(to)}`);
