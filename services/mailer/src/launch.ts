import { launch } from '@portcullis/platform/telemetry/launch';

// The mailer's entry: its program (main.ts) is imported once tracing is set up (see `launch`).
await launch('portcullis-mailer', 'main', import.meta.url);
