import { MemoryBackend } from '../../../src/storage/memory.js';
import { runConformance } from './conformance.js';

runConformance('memory', { open: () => new MemoryBackend() });
