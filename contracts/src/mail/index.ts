export * from './mail-job.ts';
