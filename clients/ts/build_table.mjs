// Builds the browser table into the folder the service serves at / (service/table/, package data):
// src/table/main.ts bundled and minified into table.js, beside index.html and table.css copied as
// they are. No source map, no hashes, no timestamps: the same sources give the same bytes, so
// tests/test_web_table.py can rebuild into a temporary folder and compare with the committed files.
// Usage: node build_table.mjs [OUT_DIR]   (default ../../service/table)
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, "src", "table");
const out = resolve(process.argv[2] ?? join(here, "..", "..", "service", "table"));

await mkdir(out, { recursive: true });
await build({
  entryPoints: [join(source, "main.ts")],
  outfile: join(out, "table.js"),
  absWorkingDir: here,
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: ["es2022"],
  sourcemap: false,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
});
for (const file of ["index.html", "table.css"]) {
  await copyFile(join(source, file), join(out, file));
}
console.log(`built the table into ${out}`);
