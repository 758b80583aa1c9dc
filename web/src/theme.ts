// Light and dark themes: the system's preference until the person picks one, then their choice
// (kept in localStorage).
const STORAGE = "ruffian.theme";
export type Theme = "light" | "dark";

export function initialTheme(): Theme {
  const stored = localStorage.getItem(STORAGE);
  if (stored === "light" || stored === "dark") return stored;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function applyTheme(theme: Theme, remember: boolean): void {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(STORAGE, theme);
}
