"""The ground floor: facts and grammars every layer reads (the catalog of families and kinds, the job and serving
kind descriptors, enums, errors, Kubernetes grammars, flag types, counters). Pure; imports nothing above it."""
