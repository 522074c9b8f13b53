// An app writes `import Cabinet` only: the storage layer's public types
// (backends, tables, errors, limits) come with it.
@_exported import CabinetStorage
