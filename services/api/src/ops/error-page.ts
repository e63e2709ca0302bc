const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Only code-like values are echoed; anything else shows as UNKNOWN (better-auth's rule). */
export function errorCode(raw: unknown): string {
  return typeof raw === 'string' && /^['A-Za-z0-9_-]{1,100}$/.test(raw) ? raw : 'UNKNOWN';
}

/** GET /error: the spec's page titled 'Authentication Error' with the code and a link to the app's root. */
export function renderErrorPage(code: string, description: string | null, appRoot: string): string {
  const safeCode = escapeHtml(code);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authentication Error</title>
<style>
  body { font-family: system-ui, sans-serif; display: grid; place-items: center; min-height: 100vh; margin: 0; background: #f6f6f4; color: #1d1d1b; }
  main { max-width: 32rem; padding: 2rem; }
  code { background: #e9e9e4; padding: 0.2rem 0.4rem; border-radius: 4px; }
</style>
</head>
<body>
<main>
  <h1>Authentication Error</h1>
  <p>Something went wrong while signing you in. Error code: <code id="error-code">${safeCode}</code></p>
  ${description ? `<p id="error-description">${escapeHtml(description.slice(0, 500))}</p>` : ''}
  <p><a href="${escapeHtml(appRoot)}">Return to the application</a></p>
</main>
</body>
</html>`;
}
