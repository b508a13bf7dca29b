/**
 * The suite's build of the bot bundled with esbuild into its `bundle/` folder, one file per entry
 * point (`src/main.js`, `src/scripts/*.js`, the voice thread's `src/voice/engine/thread.js`, the workers'
 * thread's `src/workers-thread-main.js`), so
 * that each bot process the suite starts loads one file instead of some two thousand modules:
 * about a CPU-second less a start.
 *
 * Each bundled module keeps a location of its own: `import.meta.url` (`import.meta.dirname`,
 * `__dirname`, `__filename`) is, for the bot's modules, their place in the bundle's tree, laid out
 * as the build's (the voice thread's file beside the engine, the migrations found as the image
 * finds them); for the packages', their file in node_modules. Native addons and the packages that
 * load them stay outside and are required at run time.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

/** Packages with native addons, or that find their binaries beside themselves: loaded from node_modules. */
const EXTERNAL = [
  '*.node',
  '@discordjs/opus',
  '@snazzah/davey',
  'bufferutil',
  'ffmpeg-static',
  'msgpackr-extract',
  'pg-native',
  'sodium-native',
  'utf-8-validate',
  'zlib-sync',
];

const LOCATION_NAMES = /__dirname|__filename|import\.meta/;

/**
 * Gives each module that asks where it is its own answer: every module's `import.meta.url`
 * (and the rest) is defined as a name the module declares for itself, set to `located(its path)`.
 */
function ownLocations(located: (file: string) => string): Plugin {
  return {
    name: 'own-locations',
    setup(bundler) {
      bundler.onLoad({ filter: /\.[cm]?js$/ }, async ({ path: loaded }) => {
        const text = await readFile(loaded, 'utf8');
        if (!LOCATION_NAMES.test(text)) return undefined;
        const file = located(loaded);
        const names =
          `var __bundled_url = ${JSON.stringify(pathToFileURL(file).href)}, ` +
          `__bundled_filename = ${JSON.stringify(file)}, __bundled_dirname = ${JSON.stringify(path.dirname(file))};`;
        // On the first line (after a #! line), so that the module's line numbers stay its own.
        const contents = text.startsWith('#!') ? text.replace(/^.*\n/, (first) => first + names) : names + text;
        return { contents, loader: 'js' };
      });
    },
  };
}

/**
 * Bundles the build in `buildFolder` into its `bundle/`, for the place it will have once
 * `buildFolder` is `builtAt` (it is made in a folder of its own and renamed when whole).
 */
export async function bundleBuild(buildFolder: string, builtAt: string): Promise<void> {
  const outFolder = path.join(buildFolder, 'bundle');
  const scripts = (await readdir(path.join(buildFolder, 'src/scripts'))).filter((name) => name.endsWith('.js')).map((name) => `scripts/${name.slice(0, -'.js'.length)}`);
  const entryPoints = Object.fromEntries(['main', ...scripts, 'voice/engine/thread', 'workers-thread-main'].map((entry) => [`src/${entry}`, path.join(buildFolder, `src/${entry}.js`)]));
  const inBundle = (file: string) => (file.startsWith(buildFolder + path.sep) ? path.join(builtAt, 'bundle', path.relative(buildFolder, file)) : file);
  await build({
    entryPoints,
    outdir: outFolder,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Class and function names as in the build: logged errors carry their class's name.
    keepNames: true,
    external: EXTERNAL,
    logLevel: 'error',
    plugins: [ownLocations(inBundle)],
    // The CommonJS modules in the bundle require Node's built-ins and the external packages.
    banner: { js: "import { createRequire as __bundledCreateRequire } from 'node:module'; const require = __bundledCreateRequire(import.meta.url);" },
    define: {
      'import.meta.url': '__bundled_url',
      'import.meta.filename': '__bundled_filename',
      'import.meta.dirname': '__bundled_dirname',
      __filename: '__bundled_filename',
      __dirname: '__bundled_dirname',
    },
  });
  // ES modules, whatever a Node version guesses for a `.js` file outside a package.
  await writeFile(path.join(outFolder, 'package.json'), '{ "type": "module" }\n');
}
