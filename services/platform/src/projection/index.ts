export * from './control.ts';
export * from './projection.ts';
export * from './postgres-target.ts';
export * from './runner.ts';
export * from './rebuild.ts';
export * from './redis-target.ts';
export * from './shared-log-reader.ts';
