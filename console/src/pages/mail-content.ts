/**
 * A mail's HTML made fit to show inside the console. The console runs with an admin's session, and a mail
 * holds links meant for its recipient (a password reset, an email verification): followed from here they
 * would act with the admin's cookies, so every link becomes its text and its address, neither clickable.
 * Whatever would load or run something (scripts, frames, forms, images, styles that fetch) goes too: the
 * frame it is shown in is sandboxed anyway, and the console's CSP would refuse the loads and log an error
 * for each.
 */
const DROPPED = ['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'form', 'input', 'button', 'textarea', 'select', 'link', 'meta', 'base', 'img', 'picture', 'source', 'video', 'audio', 'track', 'svg', 'math', 'style', 'template', 'noscript'];

/** Attributes that fetch or run (`on…` handlers are dropped by their prefix). */
const FETCHING = new Set(['src', 'srcset', 'href', 'xlink:href', 'action', 'formaction', 'background', 'poster', 'data', 'ping', 'lowsrc', 'dynsrc']);

export function safeMailHtml(html: string): string {
  const parsed = new DOMParser().parseFromString(html, 'text/html');
  for (const anchor of [...parsed.querySelectorAll('a, area')]) {
    const target = anchor.getAttribute('href');
    const shown = parsed.createElement('span');
    shown.className = 'mail-link';
    const text = anchor.textContent.trim();
    shown.textContent = text || (target ?? '');
    const style = anchor.getAttribute('style');
    if (style) shown.setAttribute('style', style);
    // The address goes beside the label, outside its styling: inside a button-styled link it reads as part of the label.
    if (target && text && target !== text) {
      const address = parsed.createElement('span');
      address.className = 'mail-link-target';
      address.textContent = ` <${target}>`;
      anchor.replaceWith(shown, address);
    } else anchor.replaceWith(shown);
  }
  for (const element of [...parsed.querySelectorAll(DROPPED.join(','))]) element.remove();
  for (const element of [...parsed.querySelectorAll('*')]) {
    for (const attribute of [...element.attributes]) {
      const name = attribute.name.toLowerCase();
      const fetches = name === 'style' && /url\s*\(|expression\s*\(|@import/i.test(attribute.value);
      if (name.startsWith('on') || FETCHING.has(name) || fetches) element.removeAttribute(attribute.name);
    }
  }
  return `<!doctype html>${parsed.documentElement.outerHTML}`;
}
