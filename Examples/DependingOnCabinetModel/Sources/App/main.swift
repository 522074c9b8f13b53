import CabinetModel

@StoredModel
final class Note: StoredObject {
    var text = ""
}

let store = try ObjectStore(backend: MemoryBackend(name: "notes"))
try store.register(Note.self)
let note = Note()
note.text = "Hello"
store.insert(note)
try store.save()
print("saved \(note.text)")
