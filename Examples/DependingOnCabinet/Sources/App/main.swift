import Cabinet

// All an app needs from `import Cabinet`: the store and its classes.
print("Cabinet's store type: \(ObjectStore.self)")
