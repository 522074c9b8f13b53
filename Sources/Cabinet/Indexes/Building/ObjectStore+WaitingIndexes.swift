/// Indexes that wait for a class: a build reads every record of its class or
/// none, so a record that refers to a class this program has not registered
/// yet (a store opened with `register(Mix.self)` before `register(Track.self)`)
/// stops it before its catalog is written, rather than leave that row out of
/// the index for good. The class's queries then say which class to register,
/// and each later registration tries the build again.
extension ObjectStore {
    /// After a build of `entry`'s indexes failed part way (the file is left
    /// without its catalog), its queries say why instead of reading the file,
    /// until a build finishes: the next open's, or, when the records refer to a
    /// class not registered yet (``ClassEntry/indexesAwait``), the one when it is.
    func abandonIndexes(of entry: ClassEntry, after error: any Error) {
        entry.indexes = nil
        if let error = error as? CabinetError, error.code == .classNotRegistered, let awaited = error.className {
            entry.indexesAwait = awaited
            entry.indexProblem = "index file (its records refer to \(awaited), which is not registered yet: register it, and the indexes are built then)"
        } else {
            entry.indexProblem = "index file (its build failed: \(error)): open the store again to build it"
        }
    }

    /// Opens again the indexes that waited for a class their records refer to
    /// (``ClassEntry/indexesAwait``), now that one more class is registered.
    /// One that fails is logged and its queries say why.
    func buildWaitingIndexes() {
        for entry in entriesByName.values.sorted(by: { $0.name < $1.name }) where entry.indexesAwait != nil {
            entry.indexesAwait = nil
            entry.indexProblem = nil
            do {
                try openIndexes(for: entry)
            } catch {
                entry.indexProblem = "index file (it could not be built: \(error))"
                logger.error("Cabinet: the indexes of \(entry.name) could not be built: \(error)", metadata: ["cabinet.path": "\(path)"])
            }
        }
    }

    /// The class a record refers to, as `error` says, when it is one this
    /// program has not registered: named by its type, or a class ID the store's
    /// catalog lists for a class file. `nil` for any other error (damage).
    func classNotYetRegistered(_ error: CabinetError) -> String? {
        switch error.code {
        case .classNotRegistered:
            return error.className
        case .unknownClassID:
            guard let id = error.classID else { return nil }
            return catalog?.tables.first { $0.value == .some(id) && entriesByName[$0.key] == nil }?.key
        default:
            return nil
        }
    }
}
