// A few lines of DOM building, so that the page needs no framework.

type Child = Node | string | null | undefined | false;

/** An element with attributes (`data-*`, `class`, ...), event handlers (`onclick`) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number | boolean | ((event: Event) => void) | undefined> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/** Replace everything inside `element` with `children`. */
export function fill(element: Element, ...children: (Child | Child[])[]): void {
  element.replaceChildren(...children.flat().filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}

/**
 * The landlord's mark: a crown drawn in SVG and the word, so that it reads the same with
 * or without a CJK font (地主 in text would show as empty boxes where none is installed).
 */
export function landlordBadge(): HTMLElement {
  const badge = h("span", { class: "badge landlord", "data-testid": "landlord-badge" });
  badge.innerHTML =
    '<svg viewBox="0 0 16 12" width="16" height="12" aria-hidden="true"><path d="M1 11h14L13.5 3 10 7 8 1 6 7 2.5 3z" fill="currentColor"/></svg>';
  badge.append(" landlord");
  return badge;
}
