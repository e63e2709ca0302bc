import { launch } from '@portcullis/platform/telemetry/launch';

// The api's entry: its program (server.ts) is imported once tracing is set up (see `launch`).
await launch('portcullis-api', 'server', import.meta.url);
