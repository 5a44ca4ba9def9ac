/** esbuild bundles imported stylesheets into console.css; the import itself has no value. */
declare module '*.css';
