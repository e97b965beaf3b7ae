import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { runConformance } from './conformance.js';

runConformance('memory', { open: () => new MemoryBackend() });
