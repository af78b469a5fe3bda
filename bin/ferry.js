#!/usr/bin/env node
// Ferry runs its TypeScript sources directly through tsx: one module format (ESM) everywhere,
// no build step between a change and `npm start`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
