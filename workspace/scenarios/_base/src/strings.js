// String helpers used across the app.

/** Lower-case, trim, and join words with dashes: "Hello World" -> "hello-world". */
export function slugify(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
