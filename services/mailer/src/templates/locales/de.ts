import { framedMail, lifetimeIn, type MailFrame, type ShippedLocale } from './layout.ts';

const frame: MailFrame = {
  language: 'de',
  greeting: 'Hallo{{#name}} {{name}}{{/name}},',
  orOpenThisLink: 'Oder öffnen Sie diesen Link:',
  signature: '— {{productName}}',
};
const linkExpiry = 'Dieser Link ist {{expiresIn}} gültig (bis {{expiresAt}}).';
const dates = new Intl.DateTimeFormat('de-DE', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });

export const german: ShippedLocale = {
  templates: {
    verification: framedMail(frame, {
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse für {{productName}}',
      intro: 'Bitte bestätigen Sie, dass {{to}} Ihre E-Mail-Adresse für Ihr {{productName}}-Konto ist.',
      action: 'E-Mail-Adresse bestätigen',
      expiry: linkExpiry,
      outro: 'Wenn Sie kein {{productName}}-Konto angelegt haben, können Sie diese E-Mail ignorieren.',
    }),
    'password-reset': framedMail(frame, {
      subject: 'Ihr {{productName}}-Passwort zurücksetzen',
      intro: 'Jemand hat darum gebeten, das Passwort des {{productName}}-Kontos für {{to}} zurückzusetzen.',
      action: 'Neues Passwort wählen',
      expiry: linkExpiry,
      outro: 'Wenn Sie das nicht waren, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',
    }),
    'change-email': framedMail(frame, {
      subject: 'Bestätigen Sie die Änderung Ihrer E-Mail-Adresse bei {{productName}}',
      intro:
        'Sie haben darum gebeten, die E-Mail-Adresse Ihres {{productName}}-Kontos von {{to}} in {{#newEmail}}{{newEmail}}{{/newEmail}}{{^newEmail}}eine neue Adresse{{/newEmail}} zu ändern.',
      action: 'Änderung bestätigen',
      expiry: linkExpiry,
      outro: 'Nach Ihrer Bestätigung senden wir einen Bestätigungslink an die neue Adresse. Wenn Sie das nicht waren, ignorieren Sie diese E-Mail.',
    }),
    'delete-account': framedMail(frame, {
      subject: 'Bestätigen Sie die Löschung Ihres {{productName}}-Kontos',
      intro: 'Sie haben darum gebeten, Ihr {{productName}}-Konto ({{to}}) zu löschen. Das lässt sich nicht rückgängig machen.',
      action: 'Mein Konto löschen',
      expiry: linkExpiry,
      outro: 'Wenn Sie das nicht waren, ignorieren Sie diese E-Mail und ändern Sie am besten Ihr Passwort.',
    }),
    invitation: framedMail(frame, {
      subject:
        '{{#organizationName}}{{inviter}} hat Sie zu {{organizationName}} auf {{productName}} eingeladen{{/organizationName}}{{^organizationName}}Sie sind zu einer Organisation auf {{productName}} eingeladen{{/organizationName}}',
      intro:
        '{{#organizationName}}{{inviterWithEmail}} hat Sie eingeladen, der Organisation {{organizationName}} auf {{productName}} beizutreten, {{#role}}mit der Rolle {{role}}{{/role}}{{#severalRoles}}mit den Rollen {{severalRoles}}{{/severalRoles}}{{^roles}}ohne Rolle{{/roles}}.{{/organizationName}}{{^organizationName}}Sie wurden eingeladen, einer Organisation auf {{productName}} beizutreten.{{/organizationName}}',
      action: '{{#organizationName}}{{organizationName}} beitreten{{/organizationName}}{{^organizationName}}Einladung ansehen{{/organizationName}}',
      expiry: 'Diese Einladung ist {{expiresIn}} gültig (bis {{expiresAt}}).',
      outro:
        'Die Einladung gilt für {{to}}: Nehmen Sie sie an, während Sie mit dieser Adresse angemeldet sind. Wenn Sie sie nicht erwartet haben, können Sie diese E-Mail ignorieren.',
    }),
  },
  describeLifetime: lifetimeIn({ hour: ['Stunde', 'Stunden'], minute: ['Minute', 'Minuten'], second: ['Sekunde', 'Sekunden'] }),
  formatInstant: (at) => `${dates.format(at)} UTC`,
  and: 'und',
};
