import { render } from 'preact';
import { App } from './app.tsx';
import './console.css';

render(<App />, document.getElementById('console')!);
