// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { safeMailHtml } from './mail-content.ts';

const mail = `<!doctype html><html><head><meta http-equiv="refresh" content="0;url=https://evil.example"><style>body{background:url(https://t.example/p.gif)}</style></head>
<body style="font-family: system-ui; color: #1f2933;">
<p>Hello Ann</p>
<p><a href="https://auth.example/reset-password/tok123?callbackURL=%2F" style="background: #1f2933; color: #fff;">Reset your password</a></p>
<p>Or open this link: <a href="https://auth.example/reset-password/tok123">https://auth.example/reset-password/tok123</a></p>
<img src="https://t.example/pixel.gif"><script>alert(1)</script>
<p onclick="alert(2)" style="background-image: url(https://t.example/bg.png)">Bye</p>
<form action="https://evil.example"><input name="x"></form>
</body></html>`;

describe('a mail\'s HTML as the console shows it', () => {
  const shown = safeMailHtml(mail);
  const parsed = new DOMParser().parseFromString(shown, 'text/html');

  it('keeps no link: each is its text and its address, not clickable', () => {
    expect(parsed.querySelectorAll('a, area, [href]').length).toBe(0);
    const links = [...parsed.querySelectorAll('.mail-link')].map((element) => element.textContent);
    expect(links).toEqual(['Reset your password', 'https://auth.example/reset-password/tok123']);
    // A label's address follows it, outside the button's styling.
    const button = parsed.querySelector('.mail-link')!;
    expect(button.nextElementSibling?.className).toBe('mail-link-target');
    expect(button.nextElementSibling?.textContent).toBe(' <https://auth.example/reset-password/tok123?callbackURL=%2F>');
    expect(button.nextElementSibling?.hasAttribute('style')).toBe(false);
  });

  it('drops what runs or loads: scripts, images, forms, meta refresh, styles that fetch, handlers', () => {
    expect(parsed.querySelectorAll('script, img, form, input, meta, style').length).toBe(0);
    expect(shown).not.toMatch(/alert|t\.example|evil\.example|onclick/);
  });

  it('keeps the text and the harmless inline styles', () => {
    expect(parsed.body.textContent).toContain('Hello Ann');
    expect(parsed.body.textContent).toContain('Bye');
    expect(parsed.body.getAttribute('style')).toContain('font-family');
  });
});
