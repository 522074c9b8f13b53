import Cabinet
import CabinetModel
import Observation
import Synchronization
import Testing

/// `@StoredModel` classes take part in Observation as hand-written ones do:
/// the macro makes each stored property `@Stored`; a `@Transient` one is not observed.
@Suite struct MacroObservationTests {
    final class Changes: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test(arguments: BackendKind.allCases)
    func aMacroClassPropertyIsObserved(_ kind: BackendKind) throws {
        let directory = try TemporaryDirectory()
        let store = try ObjectStore(backend: try kind.newBackend(in: directory), options: .init(observable: true))
        defer { store.close() }
        try store.register(MacroEverything.self, MacroTag.self)
        let object = MacroEverything()
        store.insert(object)
        try store.save()

        let changes = Changes()
        _ = withObservationTracking { object.string } onChange: { changes.count.add(1, ordering: .relaxed) }
        object.int = 7                               // another property
        object.scratch = 1                           // @Transient: neither stored nor observed
        #expect(changes.count.load(ordering: .relaxed) == 0)
        object.string = "changed"
        #expect(changes.count.load(ordering: .relaxed) == 1)

        let transient = Changes()
        _ = withObservationTracking { object.scratch } onChange: { transient.count.add(1, ordering: .relaxed) }
        object.scratch = 2
        #expect(transient.count.load(ordering: .relaxed) == 0, "a @Transient property is a plain property")
    }
}
