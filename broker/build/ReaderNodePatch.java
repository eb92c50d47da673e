import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.constant.ClassDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * Build step (broker/pom.xml, phase package): rewrites Helidon's {@code DataReader} in the
 * helidon-common-buffers jar of {@code target/lib} so that a consumed socket chunk forgets the
 * chunk after it. Why (broker/DESIGN.md, "Memory and start-up"): the reader keeps a connection's
 * chunks as a linked list and only moves its head forward. Once one chunk has been promoted to the
 * old generation and dropped there, its link keeps the next chunk alive through every young
 * collection until a full one, that chunk is promoted too, and so on: on a keep-alive connection
 * every request byte went to the old generation, which then filled and grew the heap to its
 * maximum. The rewrite is one instruction sequence in {@code ensureAvailable}, the only place the
 * head moves: {@code head = head.next} becomes {@code old = head; head = old.next; old.next = null}.
 * Nothing reads a chunk behind the head (every read starts from the head), so the link is dead.
 *
 * <p>Run with the JDK's source launcher (JDK 24+ for java.lang.classfile):
 * {@code java broker/build/ReaderNodePatch.java <jar>}. The jar is rewritten in place, and a second
 * run is a no-op. It fails unless it finds exactly one head store to rewrite, so a Helidon version
 * that changed the reader stops the build instead of shipping unpatched.
 */
public final class ReaderNodePatch {
    private static final String ENTRY = "io/helidon/common/buffers/DataReader.class";
    private static final String MARKER = "META-INF/queen-reader-node-patch";
    private static final ClassDesc READER = ClassDesc.of("io.helidon.common.buffers.DataReader");
    private static final ClassDesc NODE = ClassDesc.of("io.helidon.common.buffers.DataReader$Node");

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: ReaderNodePatch <helidon-common-buffers jar>");
        }
        Path jar = Path.of(args[0]);
        Path tmp = jar.resolveSibling(jar.getFileName() + ".patching");
        boolean patched = false;
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(jar));
             ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(tmp))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                if (e.getName().equals(MARKER)) {
                    System.out.println("[reader-node-patch] " + jar.getFileName() + ": already patched");
                    out.close();
                    Files.delete(tmp);
                    return;
                }
                byte[] bytes = in.readAllBytes();
                if (e.getName().equals(ENTRY)) {
                    bytes = patch(bytes);
                    patched = true;
                }
                ZipEntry copy = new ZipEntry(e.getName());
                copy.setTime(e.getTime());
                out.putNextEntry(copy);
                out.write(bytes);
                out.closeEntry();
            }
            if (!patched) {
                throw new IllegalStateException(jar + " holds no " + ENTRY);
            }
            out.putNextEntry(new ZipEntry(MARKER));
            out.write("DataReader.ensureAvailable unlinks the chunk it leaves (broker/build/ReaderNodePatch.java)\n"
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.closeEntry();
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING);
        System.out.println("[reader-node-patch] " + jar.getFileName() + ": DataReader.ensureAvailable patched");
    }

    static byte[] patch(byte[] classBytes) {
        ClassFile cf = ClassFile.of();
        AtomicInteger rewritten = new AtomicInteger();
        CodeTransform unlink = new CodeTransform() {
            private int oldHead = -1;

            @Override
            public void accept(CodeBuilder b, CodeElement e) {
                if (e instanceof FieldInstruction f && f.opcode() == Opcode.PUTFIELD
                        && f.owner().asSymbol().equals(READER) && f.name().equalsString("head")) {
                    if (oldHead < 0) {
                        oldHead = b.allocateLocal(TypeKind.REFERENCE);
                    }
                    // Stack: [reader, newHead]. Remember the head being left, store the new one, unlink the old.
                    b.aload(0).getfield(READER, "head", NODE).astore(oldHead);
                    b.with(e);
                    b.aload(oldHead).aconst_null().putfield(NODE, "next", NODE);
                    rewritten.incrementAndGet();
                } else {
                    b.with(e);
                }
            }
        };
        byte[] out = cf.transformClass(cf.parse(classBytes), ClassTransform.transformingMethodBodies(
                m -> m.methodName().equalsString("ensureAvailable"), unlink));
        if (rewritten.get() != 1) {
            throw new IllegalStateException("expected one head store in DataReader.ensureAvailable, found "
                    + rewritten.get() + ": the Helidon version changed, review broker/build/ReaderNodePatch.java");
        }
        return out;
    }

    private ReaderNodePatch() {
    }
}
