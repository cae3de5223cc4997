// The few DOM helpers the table needs: typed element lookup and creation.

export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) {
    throw new Error(`the page has no ${type.name} #${id}`);
  }
  return element;
}

type Attributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** An element with attributes ("class", "aria-*", "data-*"...) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) {
      continue;
    }
    element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children);
  return element;
}
