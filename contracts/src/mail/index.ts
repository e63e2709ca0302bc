export * from './mail-job.ts';
export * from './mail-locale.ts';
