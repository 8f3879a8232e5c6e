// Builds the page of `acia ui` (src/ui/web) into dist/ui/web: one script (app.js, every library in it),
// the style sheet and the HTML shell. Nothing is fetched at run time and nothing runs inline, so the
// server's Content-Security-Policy can allow only its own two files. The libraries are devDependencies:
// they reach users inside this bundle, which the package ships (package.json "files": dist).
import { build } from 'rolldown';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';

const out = 'dist/ui/web';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  input: 'src/ui/web/main.tsx',
  platform: 'browser',
  tsconfig: 'src/ui/web/tsconfig.json',
  logLevel: 'warn',
  transform: { define: { 'process.env.NODE_ENV': '"production"' } },
  output: { file: `${out}/app.js`, format: 'iife', minify: true, sourcemap: false },
});
copyFileSync('src/ui/web/index.html', `${out}/index.html`);
for (const f of ['app.css', 'icon.svg']) copyFileSync(`src/ui/web/${f}`, `${out}/${f}`);
