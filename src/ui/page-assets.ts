import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';

/** One file of the page, as served. */
export interface PageAsset {
  contentType: string;
  body: Buffer;
}

/** The page's files by the name the page asks for them. */
const files: Record<string, { built: string; source: string; contentType: string }> = {
  '': { built: 'index.html', source: 'index.html', contentType: 'text/html; charset=utf-8' },
  'timeline.css': { built: 'timeline.css', source: 'timeline.css', contentType: 'text/css; charset=utf-8' },
  'timeline-page.js': { built: 'timeline-page.js', source: 'timeline-page.ts', contentType: 'text/javascript; charset=utf-8' },
};

/**
 * The page's files, read once. As built, the library's code sits at the
 * root of `dist` and the page in `dist/ui` (see tsup.config.ts). From the
 * TypeScript sources (tests, `tsx`), the page's script is bundled here with
 * esbuild, a development dependency the package never loads.
 */
export class PageAssets {
  private readonly cache = new Map<string, Promise<PageAsset>>();
  private readonly fromSources: boolean;
  private readonly directory: string;

  constructor(caller: string = import.meta.url) {
    const file = fileURLToPath(caller);
    this.fromSources = path.extname(file) === '.ts';
    this.directory = path.join(path.dirname(file), this.fromSources ? 'page' : 'ui');
  }

  /** The file `name` names, or undefined for a name that is not one of the page's. */
  get(name: string): Promise<PageAsset> | undefined {
    const entry = files[name];
    if (entry === undefined) return undefined;
    let asset = this.cache.get(name);
    if (asset === undefined) {
      asset = this.load(entry.source, entry.built).then((body) => ({ contentType: entry.contentType, body }));
      // A failed read is tried again at the next request rather than remembered.
      asset.catch(() => this.cache.delete(name));
      this.cache.set(name, asset);
    }
    return asset;
  }

  private async load(source: string, built: string): Promise<Buffer> {
    if (!this.fromSources) return fs.promises.readFile(path.join(this.directory, built));
    if (!source.endsWith('.ts')) return fs.promises.readFile(path.join(this.directory, source));
    // Named through a variable, so that no bundler (ours included) follows it into the package.
    const bundler = 'esbuild';
    const esbuild = (await import(/* @vite-ignore */ bundler)) as typeof Esbuild;
    const result = await esbuild.build({ entryPoints: [path.join(this.directory, source)], bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false });
    return Buffer.from(result.outputFiles[0]!.contents);
  }
}
