import { launch } from '@portcullis/platform/telemetry/launch';

// The projector's entry: its program (main.ts) is imported once tracing is set up (see `launch`).
await launch('portcullis-projector', 'main', import.meta.url);
