#!/usr/bin/env node
// The `inlet` CLI: TypeScript sources run through tsx, so `npx inlet` works straight after `npm ci`.
import { register } from 'tsx/esm/api';

register();
await import('./inlet.ts');
