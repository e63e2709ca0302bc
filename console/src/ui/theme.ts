import { useEffect, useState } from 'react';

export type Theme = 'light' | 'dark';
const KEY = 'portcullis-console-theme';

function preferred(): Theme {
  const stored = window.localStorage.getItem(KEY);
  if (stored === 'light' || stored === 'dark') return stored;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The operator's choice, else the system's; kept across visits. */
export function useTheme(): readonly [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(preferred);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const toggle = () =>
    setTheme((current) => {
      const next = current === 'dark' ? 'light' : 'dark';
      window.localStorage.setItem(KEY, next);
      return next;
    });
  return [theme, toggle] as const;
}
